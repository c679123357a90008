"""Shard-count changes in a hunk: size knobs, shard-id lists, sharded include entries.

Only a real partition counts: a key or flag that names shard ids or a shard count.
Python or CUDA versions, runners, models and suites are build dimensions.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterator

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import KnobFilter, hunk_changes, normalize, number
from rules.analysis.lines import MAX_LINE, SideLine, code_part, side_contains, sides
from rules.analysis.workflow_jobs import placeholder_jobs
from rules.analysis.yamlscan import ITEM, YamlLine, scan
from rules.shard_matrix.shard_groups import ShardOptions

_MAX_TEXT = 1_000_000  # larger files are judged from the patch alone
_FLOW_LIST_RE = re.compile(r"^\s*(?:-\s+)?([\"']?)([A-Za-z_][\w.-]*)\1\s*:\s*\[([^\[\]]*)\]$")
_FLOW_ENTRY_RE = re.compile(r"^\s*\{[^{}]*\}")
MATRIX = frozenset({"matrix", "test-matrix"})
NEUTRAL = frozenset({"blank", "comment"})
_KEY_RE = re.compile(r"([A-Za-z_][\w-]*)\s*:")


def code_of(text: str) -> str:
    return code_part(text[:MAX_LINE]).rstrip()


@dataclasses.dataclass(frozen=True)
class Count:
    """One changed shard count: its description, line, job and (old, new) sizes."""

    what: str
    line: int
    job: str
    size: tuple[float | None, float | None] | None = None  # a size knob's old → new
    ids: tuple[float | None, float | None] | None = None  # an id list's old → new length


def _shard_keys(text: str, opts: ShardOptions) -> bool:
    return any(normalize(k) in opts.ids or normalize(k) in opts.sizes
               for k in _KEY_RE.findall(text))


def _sharded_entry(known: dict[int, YamlLine], line: YamlLine, opts: ShardOptions) -> bool:
    """Whether a matrix include/exclude entry starting at `line` carries a shard key."""
    if _shard_keys(line.text, opts):
        return True
    for n in range(line.number + 1, line.number + 40):
        other = known.get(n)
        if other is None or (other.kind not in NEUTRAL and (
                other.item or other.path[: len(line.path)] != line.path)):
            return False
        if other.kind == "key" and other.key is not None and _shard_keys(f"{other.key}:", opts):
            return True
    return False


def job_at(changed: ChangedFile, line: int,
            views: dict[str, dict[int, YamlLine] | None]) -> str:
    """The job (key under `jobs:`) of a head line, when the head text is known."""
    whole = view(changed, "head", views) if line else None
    found = whole.get(line) if whole else None
    if found is None or found.path[:1] != ("jobs",) or len(found.full_path) < 2:
        return ""
    return found.full_path[1]


def count_changes(
    changed: ChangedFile, hunk: Hunk, counted: KnobFilter, union: KnobFilter,
    views: dict[str, dict[int, YamlLine] | None], opts: ShardOptions,
) -> Iterator[Count]:
    """Changed shard counts in one hunk: size knobs, id lists, sharded include entries.
    A job that was a placeholder (its steps only echoed) had no tests to partition:
    its shards are new, not moved (asked only of a count found: the base and head are
    scanned for it)."""
    for change in hunk_changes(changed, hunk, union):
        s = change.setting
        old, new = (number(c.value) if c else None for c in (change.old, change.new))
        numeric = all(c is None or v is not None
                      for c, v in ((change.old, old), (change.new, new)))
        pairless = change.old is None or change.new is None
        if counted(s.name) and numeric and change.is_change and (
                not pairless or s.name == "parallelism"):
            line = change.new.line if change.new else 0
            job = job_at(changed, line, views)
            if not (job and job in placeholder_jobs(changed)):
                yield Count(change.describe(), line, job,
                             (old, new) if s.name in opts.sizes else None)
    lists: dict[str, list[int]] = {}
    deltas: Counter[str] = Counter()
    first: dict[str, int] = {}
    for side, which, sign in zip(sides(hunk), ("base", "head"), (-1, 1), strict=True):
        if not mentions_matrix(changed, which, hunk, side):
            continue  # no line of this side can sit under a `matrix:` key
        candidates = [(no, code_of(text)) for no, text, is_changed in side if is_changed and (
            "[" in text or text.lstrip().startswith(("-", "{")))]
        if not candidates:
            continue
        known = view(changed, which, views) or {
            y.number: y for y in scan(((n, t) for n, t, _ in side), full=False,
                                      section=hunk.section)}
        for no, stripped in candidates:
            yline = known.get(no)
            if yline is None or not MATRIX & set(yline.path) or (
                    yline.path[:1] == ("jobs",) and len(yline.path) > 1
                    and yline.path[1] in placeholder_jobs(changed)):
                continue
            flow = _FLOW_LIST_RE.match(stripped) if yline.kind == "key" else None
            if flow:
                if normalize(flow.group(2)) not in opts.ids:
                    continue  # python versions, runners, models: not a partition
                count = len([v for v in flow.group(3).split(",") if v.strip()])
                lists.setdefault(flow.group(2), [-1, -1])[sign > 0] = count
                parent = flow.group(2)
            elif yline.item and yline.path[-1:] == (ITEM,) and len(yline.path) > 1:
                parent = yline.path[-2]  # `- runner: …` under `include:`, `- 3` under `part:`
                if normalize(parent) not in opts.ids and not _sharded_entry(known, yline, opts):
                    continue
            elif yline.kind == "block" and _FLOW_ENTRY_RE.match(stripped):
                parent = yline.path[-1]  # a `{ config: …, shard: 1 }` test-matrix entry
                if not _shard_keys(stripped, opts):
                    continue
            else:
                continue
            if not flow:
                deltas[parent] += sign
            if sign > 0:
                first.setdefault(parent, no)
    for key, (old, new) in lists.items():
        if old >= 0 and new >= 0 and old != new:
            line = first.get(key, 0)
            yield Count(f"{key} {old} → {new} values", line, job_at(changed, line, views),
                         None, (old, new))
    for key, delta in deltas.items():
        if delta:
            noun = "entry" if abs(delta) == 1 else "entries"
            line = first.get(key, 0)
            yield Count(f"{key} {delta:+d} {noun}", line, job_at(changed, line, views))


def merge(counts: list[list[Count]]) -> list[list[Count]]:
    """One notice per change: a shard-count knob that moves together with the id list
    it sizes (`part: [0, 1]` and `--auto-partition-size 2`) joins that list's group."""
    lists = [(c, g) for g, group in enumerate(counts) for c in group if c.ids]
    groups: list[list[Count]] = [[] for _ in counts]
    for g, group in enumerate(counts):
        for count in group:
            home = next((h for c, h in lists if count.size and c.ids == count.size
                         and c.job == count.job), g)
            groups[home].append(count if home == g else dataclasses.replace(count, line=0))
    return groups


def mentions_matrix(changed: ChangedFile, which: str, hunk: Hunk, side: list[SideLine]) -> bool:
    """Whether `matrix` occurs where a side's key paths come from: the whole text of
    that side when known, else the hunk's lines and its `@@` section line."""
    text = changed.base_text if which == "base" else changed.head_text
    return ("matrix" in hunk.section or (text is not None and "matrix" in text)
            or side_contains(side, "matrix"))


def view(
    changed: ChangedFile, which: str, views: dict[str, dict[int, YamlLine] | None]
) -> dict[int, YamlLine] | None:
    """The whole base or head text scanned, when known and not too large."""
    if which not in views:
        text = changed.base_text if which == "base" else changed.head_text
        ok = text is not None and 0 < len(text) <= _MAX_TEXT
        views[which] = {y.number: y for y in scan(enumerate(text.splitlines(), 1))} \
            if ok and text else None
    return views[which]
