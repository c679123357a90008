"""Values the knob analysis cannot compare as plain numbers, still judged.

`rtol: 0.01` → `rtol: 5%` is a tolerance raised fivefold; `accuracy_threshold: 0.85`
→ `0..80` is a gate the harness now reads as text, skips or fails to load. A percent
is compared as its fraction; a literal that holds digits but is no number any more is
reported (with medium confidence: what the harness does with it is not in the diff).
Timeouts are left out: `30m` against `600` is a unit question `loosening` answers.
"""

from __future__ import annotations

import re

from rules.analysis.knobs import Categories, Change, number

_PERCENT_RE = re.compile(r"[\"']?\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*%\s*[\"']?")
_EXPRESSION_RE = re.compile(r"[$({}\[\]]|[A-Za-z_]\w*\s*\(|\s[-+*/]\s")


def _value(text: str) -> tuple[float | None, bool]:
    """(the value, written as a percent)."""
    plain = number(text)
    if plain is not None:
        return plain, False
    match = _PERCENT_RE.fullmatch(text.strip())
    return (float(match.group(1)) / 100, True) if match else (None, False)


def odd_value(change: Change, categories: Categories) -> str | None:
    """`kind` when a percent on either side loosens the knob, `malformed` when the new
    value of a numeric gate, tolerance or sample count is no number; else None."""
    old, new = change.old, change.new
    if old is None or new is None:
        return None
    kind = categories.kind(new.name)
    if kind is None or kind == "timeout":
        return None
    (before, old_pct), (after, new_pct) = _value(old.value), _value(new.value)
    if before is not None and after is not None:
        if not (old_pct or new_pct):
            return None  # plain numbers: `loosening` judged them
        looser = after < before if kind in ("gate", "samples") else after > before
        return kind if looser else None
    value = new.value.strip()
    if before is None or not new.literal or not re.search(r"\d", value) or \
            _EXPRESSION_RE.search(value) or len(value) > 40:
        return None
    return "malformed"
