"""Is a download the PR's decision, or was it already there / the repository's idiom?

A line only re-indented or moved (the same text removed elsewhere in the PR), an
existing download whose arguments were edited (the file fetched the same way at the
base revision), and a fetch most sibling files make the same way (the repository's
convention, e.g. every e2e test pulling its model with `snapshot_download`) are not
new decisions a review should question. A Hub repository id the file (or most of its
siblings) already handed to a loader at the base revision (`model.path=org/name`,
`from_pretrained("org/name")`) was already fetched at run time: an explicit
`huggingface-cli download org/name` added in front of it makes that visible, it does
not add a network dependency.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.runtime_download.detect import Fetch

Detect = Callable[[str], Fetch | None]

MAX_SIBLINGS = 8
# `org/name` as the Hub spells a repository: no scheme, no variable, no path beyond it.
_HUB_ID_RE = re.compile(r"\A[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,95}\Z")


def hub_id(target: str) -> str | None:
    """The Hub repository id a fetch names (`Qwen/Qwen2.5-0.5B`), or None."""
    bare = target.strip("\"'")
    return bare if _HUB_ID_RE.match(bare) and not bare.startswith((".", "~")) else None


def _names(text: str, repo_id: str) -> bool:
    return re.search(rf"(?<![\w./-]){re.escape(repo_id)}(?![\w/-])", text) is not None


def normalized(text: str) -> str:
    return " ".join(text.split())


def removed_in_pr(snapshot: PullRequestSnapshot) -> frozenset[str]:
    """Every removed line of the PR, whitespace-normalized."""
    return frozenset(normalized(line.text) for changed in snapshot.files
                     for line in changed.removed_lines if line.text.strip())


def fetched_at_base(changed: ChangedFile, kind: str, detect: Detect,
                    target: str = "") -> bool:
    """The base revision of this file already fetches the same way (a line there is a
    download of the same kind, not merely a mention such as an import), or already
    names the same Hub repository id (see the module docstring)."""
    if changed.base_text is not None:
        lines: Iterable[str] = changed.base_text.splitlines()
    else:
        lines = (line.text for line in changed.removed_lines)
    repo_id = hub_id(target)
    for text in lines:
        if repo_id is not None and repo_id in text and _names(text, repo_id):
            return True
        if kind in text:
            fetch = detect(text)
            if fetch is not None and fetch.kind == kind:
                return True
    return False


def sibling_convention(view: RepoView | None, changed: ChangedFile, kind: str,
                       target: str = "") -> bool | None:
    """True when most same-type sibling files fetch the same way (or load the same Hub
    repository id); None when unknown."""
    if view is None:
        return None
    folder = str(PurePosixPath(changed.path).parent)
    names = view.list_dir("" if folder == "." else folder)
    if names is None:
        return None
    suffix = PurePosixPath(changed.path).suffix
    siblings = [n for n in names if n != changed.path and PurePosixPath(n).suffix == suffix]
    texts = [t for t in (view.read(n) for n in siblings[:MAX_SIBLINGS]) if t is not None]
    if len(texts) < 2:
        return None
    repo_id = hub_id(target)
    using = sum(kind in t or (repo_id is not None and _names(t, repo_id)) for t in texts)
    return using >= 2 and using * 2 >= len(texts)
