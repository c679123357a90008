"""Shell commands continued over several lines with `\\`: one logical command each.

A PR that re-wraps `pytest tests/ --ignore=a --ignore=b` into one argument per line adds
`--ignore=b \\` as a physical line that no removed line matches, though the base command
already ignored b. What an added line replaces is the removed logical command, so an
argument counts as new only when that command lacked it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from bot.core.snapshot import Hunk
from rules.analysis.lines import MAX_LINE, sides
from rules.analysis.memo import memoized

_MAX_SPAN = 64  # physical lines one logical command may span (bounded walk)


def _continues(text: str | None) -> bool:
    return text is not None and text.rstrip().endswith("\\")


def _logical(parts: Iterable[str]) -> str:
    """The physical lines as one command: continuations dropped, whitespace collapsed."""
    return " ".join(" ".join(p.rstrip().removesuffix("\\") for p in parts).split())


def head_command(get: Callable[[int], str | None], n: int) -> str:
    """The logical command that head line n is part of (n alone when it is not continued
    and continues nothing)."""
    start = n
    while n - start < _MAX_SPAN and _continues(get(start - 1)):
        start -= 1
    parts: list[str] = []
    for m in range(start, start + 2 * _MAX_SPAN):
        text = get(m)
        if text is None:
            break
        parts.append(text)
        if not _continues(text):
            break
    return _logical(parts)


def removed_commands(hunk: Hunk) -> Iterator[str]:
    """The hunk's base-side logical commands that hold at least one removed line."""
    parts: list[str] = []
    removed = False
    for _, text, was_removed in sides(hunk)[0]:
        parts.append(text[:MAX_LINE])
        removed = removed or was_removed
        if not _continues(text) or len(parts) >= _MAX_SPAN:
            if removed:
                yield _logical(parts)
            parts, removed = [], False
    if parts and removed:
        yield _logical(parts)


@memoized
def _by_prefix(hunk: Hunk) -> dict[str, list[str]]:
    """`removed_commands` indexed by their first 8 characters (asked once per added line
    with an argument hint: a large hunk must not be rescanned for each)."""
    index: dict[str, list[str]] = {}
    for old in removed_commands(hunk):
        index.setdefault(old[:8], []).append(old)
    return index


def replaced_command(hunk: Hunk, command: str) -> str:
    """The removed logical command of `hunk` that `command` (a head logical command)
    replaces: the one sharing the longest prefix with it, at least 8 characters; "" if
    none does."""
    best, size = "", 7
    for old in _by_prefix(hunk).get(command[:8], [])[:50]:
        common = next((i for i, (a, b) in enumerate(zip(command, old, strict=False)) if a != b),
                      min(len(command), len(old)))
        if common > size:
            best, size = old, common
    return best
