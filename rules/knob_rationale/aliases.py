"""Parallelism flags compared by what they mean: aliases, and runner-size follow-ups.

`--tp-size 4` → `--tp 4` renames the flag and keeps the value: compared by canonical
knob (tp / tp-size / tensor-parallel-size, …) it did not change. And a parallelism
argument added because the test moved to a runner with that many chips (the same PR
lists the test under a `…-v6e-4` suite or moves its job to a 4-GPU runner) follows the
topology; the runner change is the reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.core.snapshot import ChangedFile, Hunk, LineKind, PullRequestSnapshot
from rules.analysis.knobs import Change, extract, holds_yaml_keys, knob_filter
from rules.analysis.knobs.values import number, same_value
from rules.analysis.lines import sides

_GROUPS: tuple[tuple[str, ...], ...] = (
    ("tp", "tp-size", "tensor-parallel-size", "tensor-parallel", "tensor-model-parallel-size"),
    ("pp", "pp-size", "pipeline-parallel-size", "pipeline-model-parallel-size"),
    ("dp", "dp-size", "data-parallel-size"),
    ("ep", "ep-size", "expert-parallel-size", "expert-model-parallel-size"),
    ("cp", "cp-size", "context-parallel-size", "context-model-parallel-size"),
)
CANONICAL: dict[str, str] = {name: group[0] for group in _GROUPS for name in group}
_ALIASES: dict[str, tuple[str, ...]] = {group[0]: group for group in _GROUPS}
_ALIAS_FILTER = knob_filter(tuple(name for group in _GROUPS for name in group))

# A runner or suite sized in chips: `v6e-4`, `mi35x-8`, `gpu-2`, `8gpu`, `4-gpus`.
_SIZED_RE = re.compile(
    r"(?i)(?<![\w.])(?:v\d+[a-z]{0,3}|tpu|gpus?|chips?|mi\d+[a-z]{0,3}|[ahlb]\d{2,3}|npu)"
    r"[-_x]?(\d{1,3})(?![\w.])"
    r"|(?<![\w.])(\d{1,3})[-_ ]?(?:gpus?|tpus?|chips?|cards?|devices?)(?![\w])")
_RUNNER_KEY_RE = re.compile(r"(?i)\b(?:runs-on|runner|agents|queue|machine|pool)\b")
_FILE_RE = re.compile(r"([\w.-]{1,120}\.(?:py|sh|ya?ml|json))\b")
_MAX_LOOKBACK = 30


def renamed_alias(changed: ChangedFile, hunk: Hunk, change: Change) -> bool:
    """Whether a new parallelism flag replaces a removed alias of it with the same value."""
    new = change.new
    if change.old is not None or new is None:
        return False
    canonical = CANONICAL.get(new.name)
    if canonical is None:
        return False
    others = {a for a in _ALIASES[canonical] if a != new.name}
    old, _ = sides(hunk)
    path = changed.path
    removed = extract(old, _ALIAS_FILTER, yaml_keys=holds_yaml_keys(path),
                      python=path.endswith((".py", ".pyi")), only=others)
    return any(s.changed and s.name in others and same_value(s.value, new.value)
               for s in removed)


def _sizes(text: str) -> set[int]:
    return {int(g) for m in _SIZED_RE.finditer(text[:400]) for g in m.groups() if g}


def _context_sizes(hunk: Hunk, index: int) -> set[int]:
    """Chip counts of the nearest line at or above `index` (not removed) that names one:
    the suite or job a listed test file belongs to."""
    lines = hunk.lines
    for j in range(index, max(-1, index - _MAX_LOOKBACK), -1):
        kind, text, _, _ = lines[j]
        if kind is LineKind.REMOVED:
            continue
        found = _sizes(text)
        if found:
            return found
    return set()


def placements(snapshot: PullRequestSnapshot) -> dict[str, set[int]]:
    """File name → chip counts of the runners or suites the PR (newly) lists it under,
    plus, under the key of each changed file's own path, the sizes of runner lines the
    PR changes in that file."""
    found: dict[str, set[int]] = {}
    for changed in snapshot.files[:300]:
        for hunk in changed.hunks:
            for index, line in enumerate(hunk.lines):
                if line.kind is not LineKind.ADDED:
                    continue
                text = line.text[:400]
                if _RUNNER_KEY_RE.search(text):
                    found.setdefault(changed.path, set()).update(_sizes(text))
                names = _FILE_RE.findall(text) if "." in text else ()
                sizes = _context_sizes(hunk, index) if names else set()
                for name in names:
                    found.setdefault(name.rsplit("/", 1)[-1], set()).update(sizes)
    return found


def topology_follow_up(changed: ChangedFile, change: Change,
                       placed: dict[str, set[int]]) -> bool:
    """Whether a new parallelism knob's value is the chip count of the runner the PR
    moves this test or job to."""
    new = change.new
    if change.old is not None or new is None or new.name not in CANONICAL:
        return False
    value = number(new.value)
    if value is None or value != int(value) or value < 2:
        return False
    base_name = changed.path.rsplit("/", 1)[-1]
    sizes: Iterable[int] = placed.get(base_name, set()) | placed.get(changed.path, set())
    return int(value) in set(sizes)

