"""How one knob change is judged: the words that name it, the words that give its
reason, and limits that fail loudly."""

from __future__ import annotations

import re

from rules.analysis.knobs import RETUNE_REASONS, Categories, Change, number

# How a value was arrived at is its reason: "set to each model's observed minimum minus
# 1.5 points", "calibrated on the nightly runs", "~1.1σ below the mean", "headroom".
_DERIVED = (
    r"\b(?:observed|measured|calibrated|profiled|benchmarked|empirically|derived from|"
    r"headroom|(?:minus|plus|below|above)\s{1,3}~?\d{1,4}(?:\.\d{1,4})?\s{0,2}"
    r"(?:points?|pts|pp|%|percent|σ|sigma|std)|~?\d{1,4}(?:\.\d{1,4})?\s{0,2}(?:σ|sigma)(?!\w))"
)
KNOB_REASONS = re.compile(f"{RETUNE_REASONS.pattern}|{_DERIVED}", re.I)


def subjects(change: Change) -> list[str]:
    """Names and distinctive values a description sentence may use to explain this knob."""
    setting = change.setting
    subjects = [setting.name, setting.raw]
    subjects += [v for v in (setting.value,) if len(v) >= 3 and any(ch.isdigit() for ch in v)]
    return subjects


def shortened_timeout(change: Change, categories: Categories | None) -> bool:
    old, new = change.old, change.new
    if old is None or new is None or (categories or Categories()).kind(new.name) != "timeout":
        return False
    before, after = number(old.value), number(new.value)
    return before is not None and after is not None and 0 < after < before
