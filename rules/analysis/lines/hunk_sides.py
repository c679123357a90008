"""A hunk as its two sides (base and head, context lines included), memoized per hunk.

The knob rules run over the same snapshot one after another: per-hunk and per-file
derivations are computed once and kept with the hunk or file itself (`derived`), so
they are freed with the snapshot instead of outliving the review.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from bot.core.snapshot import ChangedFile, Hunk, LineKind

# (line number on this side, text, whether the line is added/removed rather than context)
SideLine = tuple[int, str, bool]

MAX_LINE = 20_000  # characters of one line that are scanned

_T = TypeVar("_T")


def memoized(kind: str, obj: Hunk | ChangedFile, compute: Callable[[], _T]) -> _T:
    """`compute()`, once per hunk or file and `kind` (kept in `obj.derived`)."""
    # One prefix for every knob-rule derivation, apart from `yamlscan`'s own keys.
    key = "knobs." + kind
    store = obj.derived
    if key in store:
        return cast(_T, store[key])
    value = store[key] = compute()
    return value


class Side(list[SideLine]):
    """One side of a hunk, as `sides` returns it, keeping its text for every search."""

    text: tuple[list[str], str] | None = None


def side_text(side: Sequence[SideLine]) -> tuple[list[str], str]:
    """A side's lines cut to `MAX_LINE`, and joined with newlines for one-pass searches."""
    if isinstance(side, Side) and side.text is not None:
        return side.text
    texts = [text[:MAX_LINE] for _, text, _ in side]
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


def sides(hunk: Hunk) -> tuple[Side, Side]:
    """The base side and the head side of a hunk, each with its context lines."""
    return memoized("sides", hunk, lambda: _sides(hunk))


def _sides(hunk: Hunk) -> tuple[Side, Side]:
    removed, added = LineKind.REMOVED, LineKind.ADDED
    lines = hunk.lines
    old = Side([(o, text, kind is removed) for kind, text, o, _ in lines if o is not None])
    new = Side([(n, text, kind is added) for kind, text, _, n in lines if n is not None])
    return old, new

