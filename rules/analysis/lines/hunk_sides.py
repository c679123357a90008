"""A hunk as its two sides (base and head, context lines included), memoized per hunk."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import itemgetter

from bot.core.snapshot import Hunk, LineKind
from rules.analysis.lines.known import MAX_LINE
from rules.analysis.memo import memoized

# (line number on this side, text, whether the line is added/removed rather than context)
SideLine = tuple[int, str, bool]
_TEXT = itemgetter(1)


class Side(list[SideLine]):
    """One side of a hunk, as `sides` returns it, keeping its text for every search."""

    text: tuple[list[str], str] | None = None


def side_text(side: Sequence[SideLine]) -> tuple[list[str], str]:
    """A side's lines cut to `MAX_LINE`, and joined with newlines for one-pass searches."""
    if isinstance(side, Side) and side.text is not None:
        return side.text
    texts = list(map(_TEXT, side))  # C-level: every hunk side of a PR comes through here
    if max(map(len, texts), default=0) > MAX_LINE:
        texts = [text[:MAX_LINE] for text in texts]
    found = texts, "\n".join(texts)
    if isinstance(side, Side):
        side.text = found
    return found


def side_contains(side: Sequence[SideLine], word: str) -> bool:
    """Whether a line of the side contains `word` (which holds no newline)."""
    texts, joined = side_text(side)
    if word in joined:
        return True
    if max(map(len, texts), default=0) < MAX_LINE:
        return False  # no line was cut short for `side_text`
    return any(word in text for _, text, _ in side)


@memoized
def sides(hunk: Hunk) -> tuple[Side, Side]:
    """The base side and the head side of a hunk, each with its context lines."""
    return _sides(hunk)


def _sides(hunk: Hunk) -> tuple[Side, Side]:
    removed, added = LineKind.REMOVED, LineKind.ADDED
    lines = hunk.lines
    old = Side([(o, text, kind is removed) for kind, text, o, _ in lines if o is not None])
    new = Side([(n, text, kind is added) for kind, text, _, n in lines if n is not None])
    return old, new



def removed_runs(hunk: Hunk) -> Iterator[tuple[int, int]]:
    """(start, end) indexes into `hunk.lines` of each maximal run of removed lines."""
    lines, i = hunk.lines, 0
    while i < len(lines):
        if lines[i].kind is not LineKind.REMOVED:
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].kind is LineKind.REMOVED:
            i += 1
        yield start, i
