"""Gates a change deletes, and gates it adds over a stricter code default.

A removed `accuracy_threshold: 0.85` no longer gates anything, unless the code's default
takes over and is at least as strict (a dropped override of 0.93 under a default of 0.95
tightens the gate). A dropped sample count falls back to the code's default too: a
loosening only when that default is smaller. A gate added to an existing entry replaces
the default the code applied before, so `recovery_threshold: 0.93` under a default of
0.95 lowers the gate. Settings of a removed or added list item belong to the entry, not
to a retune (entries are read in `entries`); a setting moved elsewhere in the PR is not
removed; keys the code documents as warnings-only are not gates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import itemgetter

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import Categories, Setting, extract, holds_yaml_keys, number
from rules.analysis.lines import indent_width, sides
from rules.threshold_loosening.defaults import CodeKnowledge
from rules.threshold_loosening.gates import head_line
from rules.threshold_loosening.items import in_new_item, in_removed_item

_TEXT = itemgetter(1)  # of a DiffLine


@dataclass(frozen=True)
class Dropped:
    kind: str  # gate | ceiling | samples
    setting: Setting
    line: int  # the nearest head line
    default: str | None  # the code default as written


class AddedLines:
    """The PR's added lines, stripped (a setting set again elsewhere was moved, not
    removed): built when a hunk first gets that far, which most reviews never do."""

    def __init__(self, files: Sequence[ChangedFile]) -> None:
        self._files = files

    @cached_property
    def stripped(self) -> frozenset[str]:
        return frozenset(ln.text.strip() for f in self._files for ln in f.added_lines)

    @cached_property
    def spaced(self) -> frozenset[str]:
        """Each added line with its whitespace runs made one space (a moved assertion)."""
        return frozenset(" ".join(line.split()) for line in self.stripped)


def key_of(setting: Setting) -> str:
    """The key as the code spells it: `recovery_threshold`, not its per-metric label."""
    return setting.raw.split()[0] if setting.raw.split() else setting.raw


def looser(kind: str, before: float, after: float) -> bool:
    return after < before if kind in ("gate", "samples") else after > before


def _in_removed_block(side: list[tuple[int, str, bool]], pos: int) -> bool:
    """Whether the removed run around `pos` also removes the key's parent (`lmeval:`):
    the whole mapping went, which `entries` reads as an entry."""
    width = indent_width(side[pos][1])
    j = pos - 1
    while j >= 0 and side[j][2]:
        text = side[j][1]
        if text.strip() and indent_width(text) < width:
            return True
        j -= 1
    return False


def dropped(
    changed: ChangedFile, hunk: Hunk, categories: Categories, wanted: Callable[[str], bool],
    code: CodeKnowledge, pr_added: AddedLines,
) -> Iterator[Dropped]:
    """Gates (and sample counts over a smaller default) this hunk removes."""
    if not hunk.removed or not holds_yaml_keys(changed.path):
        return
    gates = categories.gate_filter()
    if not gates.present("\n".join(map(_TEXT, hunk.removed))):
        return  # no removed line names a gate (most hunks): nothing to extract
    old_side, new_side = sides(hunk)
    base = [s for s in extract(old_side, gates, yaml_keys=True, python=False) if s.changed]
    if not base:
        return
    head = {(s.name, s.label) for s in extract(new_side, gates, yaml_keys=True, python=False)}
    for setting in base:
        kind = categories.kind(setting.name)
        value = number(setting.value)
        if kind not in ("gate", "ceiling", "samples") or value is None \
                or not wanted(setting.name):
            continue
        if (setting.name, setting.label) in head or in_removed_item(hunk, setting):
            continue
        if _in_removed_block(old_side, setting.pos):
            continue
        added = pr_added.stripped
        if old_side[setting.pos][1].strip() in added or _revalued(setting, added) or \
                any(_same_value(setting.value, ln.text) for ln in hunk.added):
            continue  # moved to another place of the PR, or renamed in place
        key = key_of(setting)
        if code.warnings_only(changed.path, key):
            continue
        default = code.default(changed.path, key)
        if default is None and kind == "samples":
            continue  # an unknown default: fewer or more samples, nobody can say
        if default is not None and not looser(kind, value, float(default)):
            continue
        at = head_line(hunk, setting.line)
        if at is not None:
            yield Dropped(kind, setting, at, default)


def _revalued(setting: Setting, added: Iterable[str]) -> bool:
    """The same value set again under a key of the same kind elsewhere in the PR (a
    config restructured: `accuracy_threshold: 0.85` now `threshold: 0.85` in a list)."""
    word = setting.name.rsplit("-", 1)[-1]
    value = setting.value.strip().strip("\"'")
    return any(value in line and word in line.lower().replace("_", "-") for line in added)


def _same_value(value: str, text: str) -> bool:
    """`text` sets `value` (a key or keyword renamed in place: `min_accuracy: 0.85`)."""
    value = value.strip().strip("\"'")
    at = text.find(value)
    return at > 0 and text[:at].rstrip().rstrip("\"'").endswith((":", "="))


def over_default(
    changed: ChangedFile, hunk: Hunk, setting: Setting, kind: str, code: CodeKnowledge,
) -> str | None:
    """The code default (as written) a gate added to an existing entry loosens, or None."""
    value = number(setting.value)
    if value is None or kind not in ("gate", "ceiling", "samples"):
        return None
    if in_new_item(hunk, setting):
        return None  # a new entry's own gate, not a retune
    key = key_of(setting)
    default = code.default(changed.path, key)
    if default is None or code.warnings_only(changed.path, key):
        return None
    return default if looser(kind, float(default), value) else None
