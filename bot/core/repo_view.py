"""Repository context for rules: a narrow, bounded, read-only view at the base revision.

Some judgements need the repository, not only the diff: is this setting the convention
of the sibling configs? does the API a message recommends exist here? Rules get a
`RepoView` inside the snapshot and must work (less precisely) when it is None or when
it answers None ("don't know"). The edges implement it: the CLI from the git checkout
(`bot/sources/git.py`), PR JSON from its `repo_files` map, the App from files it
fetched before the review. Every implementation is bounded: it answers None rather
than read without limit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol

MAX_SYMBOL_HITS = 20


class RepoView(Protocol):
    def read(self, path: str) -> str | None:
        """The file's text at the base revision; None when absent, too big or unknown."""
        ...

    def list_dir(self, path: str) -> tuple[str, ...] | None:
        """Paths of the entries directly in `path` (repo-relative), or None when unknown.
        Subdirectories are listed too where the view knows them (a git tree listing)."""
        ...

    def find_symbol(self, name: str) -> tuple[str, ...] | None:
        """Paths that define `name` (a def, class or top-level assignment), or None
        when the view cannot tell (it does not hold the whole repository)."""
        ...


def defines(text: str, name: str) -> bool:
    """Whether Python-ish `text` defines `name` as a function, method, class or name."""
    pattern = rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]"
    return re.search(pattern, text, re.M) is not None


def parent(path: str) -> str:
    folder = str(PurePosixPath(path).parent)
    return "" if folder == "." else folder


@dataclass(frozen=True)
class MappedRepoView:
    """A view over files someone already read (PR JSON `repo_files`, the App's prefetch).

    `complete` says the mapping holds every file of the repository that matters for a
    symbol search; otherwise `find_symbol` only answers when it finds something.
    """

    files: Mapping[str, str] = field(default_factory=dict)
    complete: bool = False

    def read(self, path: str) -> str | None:
        return self.files.get(path)

    def list_dir(self, path: str) -> tuple[str, ...] | None:
        folder = path.strip("/")
        # Subdirectories as `git ls-tree` lists them, so a walk below a folder can descend.
        prefix = f"{folder}/" if folder else ""
        found = {prefix + p[len(prefix):].split("/", 1)[0] for p in self.files
                 if p.startswith(prefix)}
        return tuple(sorted(found)) if found or self.complete else None

    def find_symbol(self, name: str) -> tuple[str, ...] | None:
        hits = tuple(sorted(p for p, text in self.files.items() if defines(text, name)))
        if hits or self.complete:
            return hits[:MAX_SYMBOL_HITS]
        return None
