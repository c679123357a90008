"""Sibling files at the base revision: what the rest of a directory already does.

A setting or idiom that most sibling files share is the repository's convention, not a
decision of this PR. Siblings come from the PR's own changed files (their base text)
and from the snapshot's `repo_view`; without either the answer is None ("don't know").
"""

from __future__ import annotations

from pathlib import PurePosixPath

from bot.core.snapshot import PullRequestSnapshot

MAX_SIBLINGS = 32


def sibling_texts(snapshot: PullRequestSnapshot, path: str) -> list[str] | None:
    """Base-revision texts of the files next to `path` with its extension (bounded)."""
    files = sibling_files(snapshot, path)
    return None if files is None else [text for _, text in files]


def sibling_files(snapshot: PullRequestSnapshot,
                  path: str) -> list[tuple[str, str]] | None:
    """(path, base-revision text) of the files next to `path` with its extension."""
    folder = PurePosixPath(path).parent
    suffix = PurePosixPath(path).suffix
    texts: list[tuple[str, str]] = []
    # Siblings this PR also changes are read from the snapshot: a view bounded to a
    # few files per directory may not hold them.
    in_pr: set[str] = set()
    for changed in snapshot.files:
        other = PurePosixPath(changed.path)
        if changed.path == path or other.parent != folder or other.suffix != suffix:
            continue
        in_pr.add(changed.path)
        if changed.base_text is not None:
            texts.append((changed.path, changed.base_text))
    view = snapshot.repo_view
    listed = None
    if view is not None:
        listed = view.list_dir("" if str(folder) == "." else str(folder))
    if view is None or listed is None:
        return texts or None
    siblings = [p for p in listed if p != path and p not in in_pr
                and PurePosixPath(p).suffix == suffix]
    for sibling in siblings[:MAX_SIBLINGS]:
        text = view.read(sibling)
        if text is not None:
            texts.append((sibling, text))
    return texts or None


MAX_WALK_DIRS = 16  # listings below a folder: three levels of a typical tests/ tree
MAX_WALK_READS = 12
WALK_SUFFIXES = (".yaml", ".yml", ".py", ".sh", ".json")
_MARKERS = ("__init__.py", "conftest.py")  # package markers and fixtures set no run's env


def subtree_files(snapshot: PullRequestSnapshot, path: str) -> list[tuple[str, str]] | None:
    """(path, base text) of a bounded sample of files in the subfolders of `path`'s folder:
    a breadth-first walk of at most MAX_WALK_DIRS listings, then at most MAX_WALK_READS
    reads taken round-robin across the folders found, so one large folder of scripts
    does not stand for the whole tree. None without a view or when nothing is listed."""
    view = snapshot.repo_view
    if view is None:
        return None
    start = str(PurePosixPath(path).parent)
    queue = ["" if start == "." else start]
    found: list[list[str]] = []
    listings = 0
    while queue and listings < MAX_WALK_DIRS:
        folder = queue.pop(0)
        entries = view.list_dir(folder)
        listings += 1
        if entries is None:
            continue
        # Entries without a suffix are taken for subdirectories (a file read there fails).
        queue += [e for e in entries if not PurePosixPath(e).suffix]
        if listings > 1:  # the start folder's own files are the siblings, read already
            found.append([e for e in entries if PurePosixPath(e).suffix in WALK_SUFFIXES
                          and PurePosixPath(e).name not in _MARKERS])
    texts: list[tuple[str, str]] = []
    reads = 0
    while reads < MAX_WALK_READS and any(found):
        for files in found:
            if files and reads < MAX_WALK_READS:
                reads += 1
                below = files.pop(0)
                text = view.read(below)
                if text is not None:
                    texts.append((below, text))
    return texts or None
