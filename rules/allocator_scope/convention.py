"""Is an allocator setting the repository's convention rather than this PR's decision?

It is when it only moved (the same variable and value are removed elsewhere in the PR,
e.g. with the tests that needed it), or when sibling files at the base revision already
set the identical value (a new workflow or config copying the others). Sibling files
come from the snapshot's `repo_view`; without one the answer is "don't know" (None).
"""

from __future__ import annotations

import re

from bot.core.snapshot import PullRequestSnapshot
from rules.analysis.siblings import sibling_texts


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
    texts = sibling_texts(snapshot, path)
    if texts is None:
        return None
    pattern = _pattern(var, value)
    return sum(pattern.search(text) is not None for text in texts), len(texts)
