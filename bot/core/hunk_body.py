"""Hunk bodies: the line-by-line parser and its C-speed fast path.

A hunk's body is most of a diff's bytes; the fast path counts `+`/`-`/` ` runs with
string methods over the first characters of all lines instead of a Python loop per
line, and falls back to the careful loop at anything unusual.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import chain, count, repeat
from operator import itemgetter

from bot.core.snapshot import DiffLine, LineKind

FIRST_CHAR = itemgetter(0)
_REST = itemgetter(slice(1, None))
_KIND_OF = {"+": LineKind.ADDED, "-": LineKind.REMOVED, " ": LineKind.CONTEXT}
_NO_NUMBER = repeat(None)
_RUN_RE = re.compile(r"\++|-+| +")
_new_line = tuple.__new__  # a DiffLine from a 4-tuple, without NamedTuple's Python __new__


def body_end(tags: str, i: int, n: int, old_count: int, new_count: int) -> int:
    """End of a well-formed hunk body starting at line i (only `+`, `-` and ` ` lines
    until both counts are met exactly), or -1 when the line-by-line loop must decide.

    Each line meets at most one more of each count, so the end is at least the larger
    count still missing away: jump there, count, repeat.
    """
    plus = minus = space = 0
    end = i
    while True:
        need = max(new_count - plus - space, old_count - minus - space)
        if need <= 0:
            break
        if end + need > n:
            return -1
        plus += tags.count("+", end, end + need)
        minus += tags.count("-", end, end + need)
        space += tags.count(" ", end, end + need)
        end += need
    exact = plus + space == new_count and minus + space == old_count
    return end if exact and plus + minus + space == end - i else -1


def body_fast(lines: list[str], tags: str, i: int, end: int, old_start: int,
               new_start: int) -> tuple[DiffLine, ...]:
    """The DiffLines of a body `_body_end` vouched for, built without a Python loop
    per line: per run of same-kind lines when runs are long (the usual case)."""
    kinds = tags[i:end]
    runs = _RUN_RE.findall(kinds)
    if len(runs) * 8 > len(kinds):
        old_no, new_no = count(old_start), count(new_start)
        olds: Iterator[int | None] = map(
            next, map({"+": _NO_NUMBER, "-": old_no, " ": old_no}.__getitem__, kinds))
        news: Iterator[int | None] = map(
            next, map({"+": new_no, "-": _NO_NUMBER, " ": new_no}.__getitem__, kinds))
        kind_of: Iterator[LineKind] = map(_KIND_OF.__getitem__, kinds)
    else:
        kind_runs: list[Iterable[LineKind]] = []
        old_runs: list[Iterable[int | None]] = []
        new_runs: list[Iterable[int | None]] = []
        old, new = old_start, new_start
        for run in runs:
            size, tag = len(run), run[0]
            kind_runs.append(repeat(_KIND_OF[tag], size))
            if tag == "+":
                old_runs.append(repeat(None, size))
                new_runs.append(range(new, new + size))
                new += size
            elif tag == "-":
                old_runs.append(range(old, old + size))
                new_runs.append(repeat(None, size))
                old += size
            else:
                old_runs.append(range(old, old + size))
                new_runs.append(range(new, new + size))
                old += size
                new += size
        olds = chain.from_iterable(old_runs)
        news = chain.from_iterable(new_runs)
        kind_of = chain.from_iterable(kind_runs)
    rows = zip(kind_of, map(_REST, lines[i:end]), olds, news, strict=True)
    return tuple(map(_new_line, repeat(DiffLine), rows))


def body_loop(
    lines: list[str], i: int, old_start: int, old_count: int, new_start: int, new_count: int
) -> tuple[tuple[DiffLine, ...], int, str | None]:
    """A hunk body line by line: the general case, with `\\` lines and malformed input."""
    n = len(lines)
    old_no, new_no = old_start, new_start
    old_left, new_left = old_count, new_count
    body: list[DiffLine] = []
    append = body.append
    added, removed, context = LineKind.ADDED, LineKind.REMOVED, LineKind.CONTEXT
    while i < n and (old_left > 0 or new_left > 0):
        line = lines[i]
        tag = line[:1]
        if tag == "+" and new_left > 0:
            append(DiffLine(added, line[1:], None, new_no))
            new_no += 1
            new_left -= 1
        elif tag == "-" and old_left > 0:
            append(DiffLine(removed, line[1:], old_no, None))
            old_no += 1
            old_left -= 1
        elif (tag == " " or line == "") and old_left > 0 and new_left > 0:
            # An empty line is a context line whose leading space was trimmed
            # by an editor or a copy from a web page.
            append(DiffLine(context, line[1:], old_no, new_no))
            old_no += 1
            new_no += 1
            old_left -= 1
            new_left -= 1
        elif tag == "\\":
            pass  # "\ No newline at end of file"
        else:
            return tuple(body), i, (
                f"hunk at line {new_start} ends early: expected -{old_count} +{new_count} "
                f"lines, diff line {line[:60]!r} does not fit"
            )
        i += 1
    while i < n and lines[i].startswith("\\"):
        i += 1
    if old_left > 0 or new_left > 0:
        return tuple(body), i, f"hunk at line {new_start} is truncated"
    return tuple(body), i, None
