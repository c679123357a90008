"""Loosening: whether a knob change makes its check easier to pass.

Each knob is a gate (looser when lower), a ceiling (looser when higher), a tolerance,
a timeout or a sample count, by name (see `categories`).
"""

from __future__ import annotations

import re

from rules.analysis.knobs.categories import Categories
from rules.analysis.knobs.changes import Change
from rules.analysis.knobs.values import number

_DURATION_RE = re.compile(
    r"(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|mins?|minutes?|h|hrs?|hours?)", re.I
)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}
# Job time limits as a clock (Slurm `time: "00:30:00"`, `[D-]HH:MM:SS` or `MM:SS`).
_CLOCK_RE = re.compile(r"(?:(\d{1,3})-)?(\d{1,3}):([0-5]\d)(?::([0-5]\d))?")
# Names too generic to be a timeout unless the value is written as a clock.
_CLOCK_ONLY = frozenset({"time"})
# A gate moved by this factor or more is set to a new level, not nudged (`tightening`).
_RESET = 1.5


def _clock(value: str) -> float | None:
    match = _CLOCK_RE.fullmatch(value.strip().strip("\"'"))
    if match is None:
        return None
    days, first, second, third = match.groups()
    if third is None:  # MM:SS
        seconds = int(first) * 60 + int(second)
    else:
        seconds = int(first) * 3600 + int(second) * 60 + int(third)
    return float(seconds + int(days or 0) * 86400)


def _magnitude(value: str, kind: str) -> float | None:
    """A comparable number; timeouts also accept `30m`/`1h`/`90s` (converted to seconds)."""
    plain = number(value)
    if plain is not None or kind != "timeout":
        return plain
    clock = _clock(value)
    if clock is not None:
        return clock
    match = _DURATION_RE.fullmatch(value.strip().strip("\"'"))
    if match is None:
        return None
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)[0].lower()]


def loosening(change: Change, categories: Categories, allow_added: bool = False) -> str | None:
    """The kind of knob when `change` makes its check looser, else None.

    A value that is not a plain number on either side (an expression, a variable, a
    template) is not compared. Timeouts of 0 or less usually mean "no limit" in one tool
    and "fail at once" in another, so they are not compared either.
    """
    new = change.new
    if new is None:
        return None
    kind = categories.kind(new.name)
    if kind is None:
        return None
    if change.old is None:
        return kind if kind == "tolerance" and allow_added and number(new.value) is not None \
            else None
    if new.name in _CLOCK_ONLY and (_clock(new.value) is None or _clock(change.old.value) is None):
        return None
    before, after = _magnitude(change.old.value, kind), _magnitude(new.value, kind)
    if before is None or after is None:
        return None
    if (number(change.old.value) is None) != (number(new.value) is None):
        return None  # `30m` vs `600`: units unknown on one side
    if kind == "timeout" and (before <= 0 or after <= 0):
        return None
    looser = after < before if kind in ("gate", "samples") else after > before
    return kind if looser else None


def tightening(change: Change, categories: Categories) -> str | None:
    """The kind of knob when `change` resets its check to a much stricter level: a gate
    raised by half or more (0.38 → 0.88, or from 0), a ceiling or tolerance cut to two
    thirds or less (both values plain numbers), else None. That is a gate set for another
    measurement (the eval itself changed), and one too strict fails loudly. A nudge
    (0.91 → 0.92) is not: it leaves less margin over a noisy score, a retune to explain."""
    old, new = change.old, change.new
    if old is None or new is None:
        return None
    kind = categories.kind(new.name)
    if kind not in ("gate", "ceiling", "tolerance"):
        return None
    before, after = number(old.value), number(new.value)
    if before is None or after is None or before < 0 or after < 0:
        return None
    if kind == "gate":
        reset = after >= before * _RESET and after > before
    else:
        reset = after * _RESET <= before and after < before
    return kind if reset else None
