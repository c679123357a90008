"""A `threshold` beside a `baseline`: an allowed margin, not a floor.

Benchmark catalogs pair the two keys in one case (`baseline: 95`, `threshold: 5`), and
the harness passes a result within `threshold` of `baseline` (`abs(score - baseline) <=
threshold`). Raising such a threshold widens what passes, the opposite of raising a
floor. The same catalogs use the pair as a ratio (`throughput >= threshold *
baseline`: `threshold: 0.97` beside `baseline: 210`), and elsewhere a threshold close
to its baseline (0.83 beside 0.85) is itself an absolute floor. Read from the values
alone: a threshold at most half its baseline, and not a fraction beside a baseline
above 1, is a margin.
"""

from __future__ import annotations

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import Setting, number
from rules.analysis.yamlscan import is_yaml, view

_BASELINE_KEYS = frozenset({"baseline", "baseline_value", "baseline_score", "expected_value",
                            "reference_value"})
_NEAR = 12  # lines either side where a sibling key of the same case is looked for


def _baseline(changed: ChangedFile, setting: Setting) -> tuple[str, float] | None:
    """The numeric `baseline` key of the mapping that holds `setting` (a YAML sibling:
    same enclosing keys, opened on the same lines)."""
    if not is_yaml(changed.path):
        return None
    scanned = view(changed)
    own = scanned.get(setting.line)
    if own is None or own.key is None:
        return None
    for n in range(setting.line - _NEAR, setting.line + _NEAR + 1):
        line = scanned.get(n)
        if line is None or n == setting.line or line.key is None:
            continue
        if line.key.lower() not in _BASELINE_KEYS or line.indent != own.indent:
            continue
        if line.path != own.path or line.anchors != own.anchors:
            continue
        value = number(line.value)
        if value is not None:
            return line.key, value
    return None


def margin_change(changed: ChangedFile, old: Setting, new: Setting) -> tuple[str, bool] | None:
    """(`baseline: 95`, widened) when the gate `old` → `new` is a margin around that
    baseline; None when it reads as a floor."""
    found = _baseline(changed, new)
    if found is None:
        return None
    key, baseline = found
    before, after = number(old.value), number(new.value)
    if before is None or after is None or baseline <= 0 or before < 0:
        return None
    if before < 1 < baseline or before > baseline / 2:
        return None  # a ratio of the baseline, or a floor on its scale
    return f"{key}: {baseline:g}", after > before
