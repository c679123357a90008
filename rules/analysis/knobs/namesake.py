"""A value put in line with the name of its own entry: a copy-paste fixed, no retune.

Benchmark catalogs often name each case by its load (`MiniMax-…-in64k-72-18`: 72
prompts, batch 18). A case copied from its neighbour and renamed keeps the
neighbour's values (`…-in64k-4-1` still running 72 prompts at batch 18) until a PR
sets them to what the name says: `num_prompts: 72 → 4`, `batch_size: 18 → 1`. The
name is the reason, written by whoever added the case. A change counts as that when
the new value is a number of its entry's (unchanged) name and the old is not, and the
file shows the convention: at least two other entries carry, at the same key path, a
value their own names hold, and at least as many do as do not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs.changes import Change
from rules.analysis.knobs.values import number
from rules.analysis.memo import memoized
from rules.analysis.yamlscan import ITEM, YamlLine, is_yaml, unquote, view

# Keys whose value names a case (not a model or dataset, whose sizes are no loads).
_NAME_KEYS = frozenset({"name", "case", "case_name", "test_name", "display_name"})
_TOKEN_SPLIT_RE = re.compile(r"[-_\s/:,]+")
_NUMBER_RE = re.compile(r"\d{1,7}(?:\.\d{1,4})?")
_MIN_SIBLINGS = 2
_MAX_LINES = 20_000

# (entry opener, path below the entry) → value, per head line holding a number
_Record = tuple[int, tuple[str, ...], float]


def named_by_entry(changed: ChangedFile, change: Change) -> bool:
    """Whether `change` sets a value to what its entry's own name says (see above)."""
    old, new = change.old, change.new
    if old is None or new is None or not is_yaml(changed.path):
        return False
    before, after = number(old.value), number(new.value)
    if before is None or after is None or before == after:
        return False
    table = _table(changed)
    if table is None:
        return False
    records, names, renamed = table
    mine = records.get(new.line)
    if mine is None or mine[0] in renamed:
        return False  # not a named entry's value, or the name changes with it
    opener, below, _ = mine
    tokens = names.get(opener, frozenset())
    if after not in tokens or before in tokens:
        return False
    agree = disagree = 0
    for other, path, value in records.values():
        if other != opener and path == below and other in names:
            if value in names[other]:
                agree += 1
            else:
                disagree += 1
    return agree >= _MIN_SIBLINGS and agree >= disagree


@memoized
def _table(changed: ChangedFile) -> tuple[
        Mapping[int, _Record], Mapping[int, frozenset[float]], frozenset[int]] | None:
    """Numbers of the head's named entries, the numbers of each entry's name, and
    the entries whose name line the PR adds (renamed or new)."""
    if changed.head_lines is None or len(changed.head_lines) > _MAX_LINES:
        return None
    lines = list(view(changed))
    names: dict[int, frozenset[float]] = {}
    added = {n for line in changed.added_lines if (n := line.new_no) is not None}
    renamed: set[int] = set()
    for line in lines:
        opener = _opener_named(line)
        if opener is not None and opener not in names:
            names[opener] = _numbers(unquote(line.value.strip()))
            if line.number in added:
                renamed.add(opener)
    records: dict[int, _Record] = {}
    for line in lines:
        if line.kind != "key" or line.key is None:
            continue
        value = number(unquote(line.value.strip()))
        if value is None:
            continue
        for at in range(len(line.path) - 1, -1, -1):
            if line.path[at] == ITEM and at < len(line.anchors) and line.anchors[at] in names:
                records[line.number] = (line.anchors[at], (*line.path[at + 1:], line.key),
                                        value)
                break
    return records, names, frozenset(renamed)


def _opener_named(line: YamlLine) -> int | None:
    """The list item a naming line names (`- name: …`, or `name:` directly in it)."""
    if line.key is None or line.key.lower() not in _NAME_KEYS:
        return None
    if line.item:
        return line.number
    if line.path and line.path[-1] == ITEM and len(line.anchors) == len(line.path):
        return line.anchors[-1] or None
    return None


def _numbers(name: str) -> frozenset[float]:
    """The numbers a name spells as words of their own (`in64k-4-1` → 4, 1)."""
    return frozenset(float(token) for token in _TOKEN_SPLIT_RE.split(name[:300])
                     if _NUMBER_RE.fullmatch(token))
