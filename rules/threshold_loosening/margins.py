"""A `threshold` beside a `baseline`: an allowed margin, not a floor.

Benchmark catalogs pair the two keys in one case (`baseline: 95`, `threshold: 5`), and
the harness passes a result within `threshold` of `baseline` (`abs(score - baseline) <=
threshold`). Raising such a threshold widens what passes, the opposite of raising a
floor. The same catalogs use the pair as a ratio (`throughput >= threshold *
baseline`: `threshold: 0.97` beside `baseline: 210`, or `0.1` beside a placeholder
`baseline: 1`), and elsewhere a threshold close to its baseline (0.83 beside 0.85) is
itself an absolute floor. Read from the values alone: a threshold at most half its
baseline, and not a fraction beside a baseline of 1 or more, is a margin.

The reading is made on each side: a margin on one side and a ratio on the other are two
different cases paired by position (an accuracy case replaced by a performance one),
whose values are not old → new.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import Setting, normalize, number
from rules.analysis.yamlscan import YamlLine, base_side, is_yaml, view
from rules.threshold_loosening.messages import Loose

_BASELINE_KEYS = frozenset({"baseline", "baseline_value", "baseline_score", "expected_value",
                            "reference_value"})
_BASELINE_WORDS = ("baseline", "expected_value", "reference_value")  # in every key above
_NEAR = 12  # lines either side where a sibling key of the same case is looked for


def _baseline(lines: Mapping[int, YamlLine], at: int) -> float | None:
    """The numeric `baseline` key of the mapping that holds line `at` (a YAML sibling:
    same enclosing keys, opened on the same lines)."""
    own = lines.get(at)
    if own is None or own.key is None:
        return None
    for n in range(at - _NEAR, at + _NEAR + 1):
        line = lines.get(n)
        if line is None or n == at or line.key is None:
            continue
        if line.key.lower() not in _BASELINE_KEYS or line.indent != own.indent:
            continue
        if line.path != own.path or line.anchors != own.anchors:
            continue
        value = number(line.value)
        if value is not None:
            return value
    return None


def _is_margin(value: float | None, baseline: float | None) -> bool:
    if value is None or baseline is None or baseline <= 0 or value < 0:
        return False
    return not (value < 1 <= baseline or value > baseline / 2)


def margin_change(changed: ChangedFile, old: Setting, new: Setting
                  ) -> tuple[str, bool] | None:
    """How to read the gate `old` → `new` beside a `baseline`: (`baseline: 95`,
    widened) for a margin on both sides, ("", False) when one side reads as a margin and
    the other does not (not comparable), None for a floor (the usual reading). Beside an
    unchanged baseline the base's reading holds: a margin widened past half its baseline
    stays one."""
    if not is_yaml(changed.path):
        return None
    before, after = number(old.value), number(new.value)
    if before is None or after is None:
        return None
    base = _baseline(base_side(changed), old.line)
    head = _baseline(view(changed).lines, new.line)
    if base is None and head is None:
        return None
    was = _is_margin(before, base)
    now = was if head == base else _is_margin(after, head)
    if was and now and head is not None:
        return f"baseline: {head:g}", after > before
    return ("", False) if was != now else None


_MARGIN_KEYS = ("threshold", "tolerance", "margin")


def _margin(lines: Mapping[int, YamlLine], at: int) -> float | None:
    """The numeric margin key (`threshold: 5`) of the mapping holding `baseline` line `at`."""
    own = lines[at]
    for n in range(at - _NEAR, at + _NEAR + 1):
        line = lines.get(n)
        if line is None or line.key is None or not line.key.lower().endswith(_MARGIN_KEYS):
            continue
        if line.path == own.path and line.anchors == own.anchors and line.indent == own.indent:
            return number(line.value)
    return None


def lowered_baselines(changed: ChangedFile, hunk: Hunk) -> list[Loose]:
    """`baseline: 90 → 87` beside an unchanged margin (`threshold: 5`): the band a
    result must fall in moves down with it, so a lower score passes, as a floor
    lowered (old, new, head line). Paired by key path: a baseline of another case is
    none. A ratio beside a baseline (`threshold: 0.97`) is a performance case's, left to
    the knob rules."""
    # Most hunks remove no baseline: a text test spares them the base side's scan.
    if not is_yaml(changed.path) or not any(
            word in removed.text.lower() for removed in hunk.removed for word in _BASELINE_WORDS):
        return []
    base, head = base_side(changed), view(changed).lines
    olds: dict[tuple[str, ...], YamlLine] = {}
    for removed in hunk.removed:
        line = base.get(removed.old_no or 0)
        if line is not None and line.key is not None and line.key.lower() in _BASELINE_KEYS:
            olds.setdefault((*line.path, line.key), line)
    found: list[Loose] = []
    for added in hunk.added if olds else ():
        line = head.get(added.new_no or 0)
        if line is None or line.key is None:
            continue
        old = olds.get((*line.path, line.key))
        if old is None:
            continue
        before, after = number(old.value), number(line.value)
        margin = _margin(head, line.number)
        if before is None or after is None or margin is None or after >= before:
            continue
        if _margin(base, old.number) == margin and _is_margin(margin, before) and _is_margin(
                margin, after):
            found.append(Loose("gate", line.key, old.value, line.value, line.number,
                               (line.number,), normalize(line.key)))
    return found
