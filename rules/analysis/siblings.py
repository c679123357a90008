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
