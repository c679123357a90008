"""`RepoView` over a local git checkout at one revision: lazy, cached and bounded.

Reads go through `git` (no work-tree access, so an unclean checkout does not leak
into the view); after `MAX_READS` reads or listings the view answers None ("don't
know"), so a rule can never turn a review into a crawl of the repository.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from bot.sources.files import MAX_TEXT_BYTES, decode_text

MAX_READS = 200
MAX_SYMBOL_HITS = 20
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,100}")


class GitRepoView:
    def __init__(self, repo: Path, rev: str) -> None:
        self._repo = repo
        self._rev = rev
        self._budget = MAX_READS
        self._texts: dict[str, str | None] = {}
        self._dirs: dict[str, tuple[str, ...] | None] = {}
        self._symbols: dict[str, tuple[str, ...] | None] = {}

    def _git(self, *args: str) -> bytes | None:
        if self._budget <= 0:
            return None
        self._budget -= 1
        try:
            done = subprocess.run(["git", "-C", str(self._repo), *args],
                                  capture_output=True, check=False, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        # git grep exits 1 when nothing matches: an answer, not a failure.
        return done.stdout if done.returncode in (0, 1) else None

    def read(self, path: str) -> str | None:
        if path not in self._texts:
            size = self._git("cat-file", "-s", f"{self._rev}:{path}")
            text: str | None = None
            if size and size.strip().isdigit() and int(size) <= MAX_TEXT_BYTES:
                blob = self._git("cat-file", "blob", f"{self._rev}:{path}")
                text = decode_text(blob)[0] if blob is not None else None
            self._texts[path] = text
        return self._texts[path]

    def list_dir(self, path: str) -> tuple[str, ...] | None:
        folder = path.strip("/")
        if folder not in self._dirs:
            where = [f"{folder}/"] if folder else []  # the root: no path argument
            out = self._git("ls-tree", "--name-only", self._rev, *where)
            self._dirs[folder] = None if out is None else tuple(sorted(
                line for line in out.decode("utf-8", "replace").splitlines() if line))
        return self._dirs[folder]

    def find_symbol(self, name: str) -> tuple[str, ...] | None:
        if not _NAME_RE.fullmatch(name):
            return None
        if name not in self._symbols:
            pattern = rf"^\s*(async\s+)?(def|class)\s+{name}\b|^{name}\s*[:=]"
            out = self._git("grep", "-l", "-E", pattern, self._rev, "--", "*.py")
            hits = None if out is None else tuple(sorted(
                line.split(":", 1)[1] for line in out.decode("utf-8", "replace").splitlines()
                if ":" in line))
            self._symbols[name] = None if hits is None else hits[:MAX_SYMBOL_HITS]
        return self._symbols[name]
