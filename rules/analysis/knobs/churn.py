"""Removed lines a hunk adds back unchanged: churn, not replaced code.

A file whose last line had no newline shows that line removed and re-added identically
when anything is appended (git's "\\ No newline at end of file"); a re-indented or
re-wrapped line shows the same text with other whitespace. Neither line was replaced:
a block inserted after it replaces nothing, and a block it sits in kept its code.
"""

from __future__ import annotations

from collections import Counter

from bot.core.snapshot import DiffLine, Hunk, LineKind
from rules.analysis.memo import memoized

_MAX_LINE = 2000


def _normal(text: str) -> str:
    return " ".join(text[:_MAX_LINE].split())


@memoized
def readded(hunk: Hunk) -> frozenset[int]:
    """The base line numbers of removed lines that an added line of the same run of
    changes repeats, whitespace aside (each added line answers for one removed line)."""
    found: set[int] = set()
    run: list[DiffLine] = []
    for line in (*hunk.lines, None):
        if line is not None and line.kind is not LineKind.CONTEXT:
            run.append(line)
            continue
        if len(run) > 1:
            found |= _matched(run)
        run = []
    return frozenset(found)


def _matched(run: list[DiffLine]) -> set[int]:
    added = Counter(_normal(d.text) for d in run if d.kind is LineKind.ADDED)
    out: set[int] = set()
    for d in run:
        if d.kind is not LineKind.REMOVED or d.old_no is None:
            continue
        text = _normal(d.text)
        if text and added[text] > 0:
            added[text] -= 1
            out.add(d.old_no)
    return out
