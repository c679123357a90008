"""Is an allocator setting the repository's convention rather than this PR's decision?

It is when it only moved (the same variable and value are removed elsewhere in the PR,
e.g. with the tests that needed it), or when sibling files at the base revision already
set the identical value (a new workflow or config copying the others). Sibling files
come from the snapshot's `repo_view`; without one the answer is "don't know" (None).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from bot.core.snapshot import PullRequestSnapshot

_MAX_SIBLINGS = 32


def _pattern(var: str, value: str) -> re.Pattern[str]:
    quoted_key = r"[\"'\]]{0,3}"  # `VAR:`, `"VAR":`, `os.environ["VAR"] =`
    return re.compile(
        rf"{re.escape(var)}{quoted_key}\s*[:=,]\s*[\"']?{re.escape(value)}(?![\w.])")


def moved(snapshot: PullRequestSnapshot, path: str, var: str, value: str) -> bool:
    """The same setting is removed by this PR from another file (it moved here)."""
    pattern = _pattern(var, value)
    return any(
        pattern.search(line.text)
        for changed in snapshot.files if changed.path != path
        for line in changed.removed_lines if var in line.text
    )


def sibling_share(snapshot: PullRequestSnapshot, path: str, var: str,
                  value: str) -> tuple[int, int] | None:
    """(siblings setting the identical value, siblings read), or None without context."""
    view = snapshot.repo_view
    if view is None:
        return None
    folder = str(PurePosixPath(path).parent)
    listed = view.list_dir("" if folder == "." else folder)
    if listed is None:
        return None
    suffix = PurePosixPath(path).suffix
    siblings = [p for p in listed if p != path and PurePosixPath(p).suffix == suffix]
    pattern = _pattern(var, value)
    same = read = 0
    for sibling in siblings[:_MAX_SIBLINGS]:
        text = view.read(sibling)
        if text is None:
            continue
        read += 1
        same += pattern.search(text) is not None
    return (same, read) if read else None
