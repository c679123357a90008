"""How one knob change is judged: the words that name it, and limits that fail loudly."""

from __future__ import annotations

from rules.analysis.knobs import Categories, Change, number


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
