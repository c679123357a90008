"""Knob changes: the settings of one hunk paired old → new, and runs of brand-new units.

Each setting on an added line is paired with the removed setting of the same name in
the same hunk (by metric label, then by order, then by position), never with one of
another entry of a data config (`entry_keys`: another case, another catalog model).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate
from operator import itemgetter
from typing import NamedTuple, cast

from bot.core.snapshot import ChangedFile, Hunk, LineKind
from rules.analysis.knobs.entry_keys import differ
from rules.analysis.knobs.names import KnobFilter
from rules.analysis.knobs.settings import Setting, extract, holds_yaml_keys
from rules.analysis.knobs.values import same_value
from rules.analysis.lines import sides
from rules.analysis.memo import memoized

_MAX_PAIRING = 8  # beyond this many same-name settings per side, pair by order only
# A run of added lines that starts a new test, step or job: knobs in it are new, not retuned.
_NEW_UNIT_RE = re.compile(
    r"^\s*(?:(?:async\s+)?def\s|class\s|-\s+(?:label|name|key|id|group)\s*:|runs-on\s*:)"
)
# The same over added lines joined by newlines: `[^\S\n]` is `\s` kept within a line.
_NEW_UNIT_LINES_RE = re.compile(
    r"^[^\S\n]*(?:(?:async[^\S\n]+)?def[^\S\n]|class[^\S\n]"
    r"|-[^\S\n]+(?:label|name|key|id|group)[^\S\n]*:|runs-on[^\S\n]*:)", re.M)
_UNIT_KEYS = ("label", "name", "key", "id", "group")  # the `- key:` alternatives above
_TEXT, _NEW_NO = itemgetter(1), itemgetter(3)  # of a DiffLine


class Change(NamedTuple):
    """A setting on the head side and its base-side counterpart (either may be missing)."""

    old: Setting | None
    new: Setting | None

    @property
    def setting(self) -> Setting:
        found = self.new or self.old
        assert found is not None
        return found

    @property
    def is_change(self) -> bool:
        if self.new is None or self.old is None:
            return True
        return not same_value(self.old.value, self.new.value)

    def describe(self) -> str:
        s = self.setting
        if self.old is None:
            return f"{s.raw} (new) {s.shown}"
        if self.new is None:
            return f"{s.raw} {self.old.shown} → (removed)"
        return f"{s.raw} {self.old.shown} → {self.new.shown}"


def pair(old: Sequence[Setting], new: Sequence[Setting]) -> list[Change]:
    """Pair changed settings by name: same label, same indentation, then order, position.

    The cheapest pairs are taken first, so a job-level `timeout-minutes` added above a
    changed step-level one does not steal the step's old value.
    """
    olds = [s for s in old if s.changed]
    news = [s for s in new if s.changed]
    old_by_name: dict[str, list[int]] = {}
    new_by_name: dict[str, list[int]] = {}
    for k, setting in enumerate(olds):
        old_by_name.setdefault(setting.name, []).append(k)
    for k, setting in enumerate(news):
        new_by_name.setdefault(setting.name, []).append(k)
    match: dict[int, int] = {}  # new index → old index
    for name, new_ids in new_by_name.items():
        old_ids = old_by_name.get(name, [])
        if len(old_ids) * len(new_ids) > _MAX_PAIRING * _MAX_PAIRING or (
            len(old_ids) == len(new_ids) and all(
                olds[o].label == news[n].label and olds[o].indent == news[n].indent
                and olds[o].entry == news[n].entry
                for n, o in zip(new_ids, old_ids, strict=True))
        ):
            match.update((n, o) for n, o in zip(new_ids, old_ids, strict=False)
                         if not differ(olds[o].entry, news[n].entry))  # cheapest anyway
            continue
        costs = sorted(
            ((olds[o].label != news[n].label, olds[o].indent != news[n].indent,
              abs(rank - ordinal), abs(olds[o].pos - news[n].pos)), n, o)
            for ordinal, n in enumerate(new_ids)
            for rank, o in enumerate(old_ids)
            if not differ(olds[o].entry, news[n].entry)
        )
        taken: set[int] = set()
        for _, n, o in costs:
            if n not in match and o not in taken:
                match[n] = o
                taken.add(o)
    paired = set(match.values())
    changes = [Change(olds[match[n]] if n in match else None, s) for n, s in enumerate(news)]
    changes += [Change(olds[k], None) for k in range(len(olds)) if k not in paired]
    return changes


_REMOVAL_MATTERS = frozenset({"parallelism", "max-parallel"})


def hunk_changes(changed: ChangedFile, hunk: Hunk, wanted: KnobFilter) -> list[Change]:
    """Every changed, added or removed wanted setting of one hunk, paired old → new."""
    # The knob rules read each hunk with the same (union) filter: parsed once.
    return _hunk_changes(hunk, changed.path, wanted)


@memoized
def _hunk_changes(hunk: Hunk, path: str, wanted: KnobFilter) -> list[Change]:
    old, new = sides(hunk)
    yaml_keys = holds_yaml_keys(path)
    python = path.endswith((".py", ".pyi"))
    head = extract(new, wanted, yaml_keys=yaml_keys, python=python)
    # Removed settings matter when the head side sets the same knob (old → new), or
    # when a whole shard count goes away (shard-matrix reports `parallelism` removed).
    names = {s.name for s in head if s.changed} | _REMOVAL_MATTERS
    base = extract(old, wanted, yaml_keys=yaml_keys, python=python, only=names)
    return pair(base, head)


@memoized
def new_unit_lines(hunk: Hunk) -> frozenset[int]:
    """Head lines in runs of added lines that start a new test, step or job."""
    added = hunk.added
    if not added:
        return frozenset()
    numbers = list(map(_NEW_NO, added))  # C-level iterators: asked of every hunk
    if None in numbers:
        return _new_unit_lines_slowly(hunk)
    texts = list(map(_TEXT, added))
    if max(map(len, texts)) > 400:
        texts = [text[:400] for text in texts]
    joined = "\n".join(texts)
    if joined.count("\n") + 1 != len(texts):
        return _new_unit_lines_slowly(hunk)  # no added line, or one holding a newline
    if not _may_start_unit(joined) or _NEW_UNIT_LINES_RE.search(joined) is None:
        return frozenset()  # most hunks: one search over every added line
    # A run is the added lines between two context lines (removed lines don't end it);
    # the kinds are one-character strings, so runs are the pieces between spaces.
    pieces = hunk.kinds.split(" ")
    if sum(1 for piece in pieces if "+" in piece) == 1:
        # One run holds every added line: the search above was over exactly that run.
        return frozenset(cast("list[int]", numbers))
    starts = list(accumulate([len(t) + 1 for t in texts], initial=0))
    result: set[int] = set()
    first = 0
    for piece in pieces:
        size = piece.count("+")
        if size and _NEW_UNIT_LINES_RE.search(joined, starts[first],
                                              starts[first + size] - 1) is not None:
            result.update(cast("list[int]", numbers[first : first + size]))
        first += size
    return frozenset(result)


def _may_start_unit(text: str) -> bool:
    """Whether `text` holds the words every `_NEW_UNIT_LINES_RE` match contains (a few
    substring tests, which spare the regex's scan of a step list or a config)."""
    return "def" in text or "class" in text or "runs-on" in text or ("-" in text and any(
        word in text for word in _UNIT_KEYS))


def _new_unit_lines_slowly(hunk: Hunk) -> frozenset[int]:
    result: set[int] = set()
    run: list[int] = []
    is_new = False
    for line in (*hunk.lines, None):
        if line is not None and line.kind is LineKind.ADDED and line.new_no is not None:
            run.append(line.new_no)
            is_new = is_new or _NEW_UNIT_RE.match(line.text[:400]) is not None
            continue
        if line is not None and line.kind is LineKind.REMOVED:
            continue
        if is_new:
            result.update(run)
        run, is_new = [], False
    return frozenset(result)
