"""Is a download the PR's decision, or was it already there / the repository's idiom?

A line only re-indented or moved (the same text removed elsewhere in the PR), an
existing download whose arguments were edited (the file fetched the same way at the
base revision), and a fetch most sibling files make the same way (the repository's
convention, e.g. every e2e test pulling its model with `snapshot_download`) are not
new decisions a review should question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.runtime_download.detect import Fetch

Detect = Callable[[str], Fetch | None]

MAX_SIBLINGS = 8


def normalized(text: str) -> str:
    return " ".join(text.split())


def removed_in_pr(snapshot: PullRequestSnapshot) -> frozenset[str]:
    """Every removed line of the PR, whitespace-normalized."""
    return frozenset(normalized(line.text) for changed in snapshot.files
                     for line in changed.removed_lines if line.text.strip())


def fetched_at_base(changed: ChangedFile, kind: str, detect: Detect) -> bool:
    """The base revision of this file already fetches the same way (a line there is a
    download of the same kind, not merely a mention such as an import)."""
    if changed.base_text is not None:
        lines: Iterable[str] = changed.base_text.splitlines()
    else:
        lines = (line.text for line in changed.removed_lines)
    for text in lines:
        if kind in text:
            fetch = detect(text)
            if fetch is not None and fetch.kind == kind:
                return True
    return False


def sibling_convention(view: RepoView | None, changed: ChangedFile, kind: str) -> bool | None:
    """True when most same-type sibling files fetch the same way; None when unknown."""
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
    using = sum(kind in t for t in texts)
    return using >= 2 and using * 2 >= len(texts)
