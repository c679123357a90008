"""Which list item a setting belongs to, so old → new pairs never cross items.

`pair` in the knob analysis matches settings by name within a hunk; when a hunk removes
one YAML list entry and adds another (a model dropped, a new model added), the removed
entry's `accuracy_threshold: 0.90` and the new entry's `0.30` share a name but belong to
different items: not a gate lowered 0.90 → 0.30. An item is the nearest `- ` line above
the setting whose dash sits left of the setting's key; items differ when both name
what they evaluate (`- model: …`, `- task: …`) and the names differ.

In a workflow the job is read from the whole file: a value of one job is never the old
value of another job's (a hunk spanning several jobs pairs by name and order), and a
value of a placeholder job (its steps only echoed) is no baseline for the real job that
replaces it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import Setting
from rules.analysis.lines import SideLine, indent_width, sides
from rules.analysis.workflow_jobs import job_of, jobs, placeholder_jobs, side_view
from rules.analysis.yamlscan import is_yaml

_MAX_UP = 80  # lines looked at above a setting
_IDENTITY_RE = re.compile(
    r"-\s+[\"']?(?:model|model_name|model_id|model_path|checkpoint|task|task_name|dataset)"
    r"[\"']?\s*:")
_INLINE_IDENTITY_RE = re.compile(
    r"[\"']?(?:model|model_name|model_id|model_path|task|task_name|dataset)[\"']?\s*[:=]\s*"
    r"[\"']([^\"'\n]{1,120})[\"']")


def _owner(side: Sequence[SideLine], setting: Setting) -> tuple[str, bool] | None:
    """The item's first line as written (only its key when the setting is on it), and
    whether that line is changed (added or removed)."""
    if not 0 <= setting.pos < len(side):
        return None
    text = side[setting.pos][1]
    column = indent_width(text)
    if text.lstrip().startswith("- "):
        # The setting is on its item's first line: that it changed says nothing of the item.
        return text.split(":", 1)[0].strip(), False
    for j in range(setting.pos - 1, max(-1, setting.pos - _MAX_UP), -1):
        line = side[j][1]
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        width = indent_width(line)
        if width < column and stripped.startswith("- "):
            return line.strip(), side[j][2]
        if width < column:
            column = width  # a parent mapping key: the item must sit left of it too
    return None


def _named(side: Sequence[SideLine], setting: Setting) -> str | None:
    """The entry a one-line mapping names (`{"model": "org/a", "threshold": 0.9}`)."""
    if not 0 <= setting.pos < len(side):
        return None
    match = _INLINE_IDENTITY_RE.search(side[setting.pos][1])
    return match.group(1) if match else None


def same_item(hunk: Hunk, old: Setting, new: Setting) -> bool:
    """False when the two settings provably sit in different list items."""
    old_side, new_side = sides(hunk)
    named = _named(old_side, old), _named(new_side, new)
    if named[0] is not None and named[1] is not None and named[0] != named[1]:
        return False
    before, after = _owner(old_side, old), _owner(new_side, new)
    if before is None or after is None or before[0] == after[0]:
        return True  # no item seen on one side, or the same item
    # Entries that name what they evaluate (a model, a task) are different entries when
    # the names differ; a renamed CI step is still the same slot of the pipeline.
    return not (_IDENTITY_RE.match(before[0]) and _IDENTITY_RE.match(after[0]))


def in_new_item(hunk: Hunk, setting: Setting) -> bool:
    """Whether a head-side setting sits in a list item the change adds (a new entry)."""
    owner = _owner(sides(hunk)[1], setting)
    return owner is not None and owner[1]


def in_removed_item(hunk: Hunk, setting: Setting) -> bool:
    """Whether a base-side setting sits in a list item the change removes."""
    owner = _owner(sides(hunk)[0], setting)
    return owner is not None and owner[1]


def same_job(changed: ChangedFile, old: Setting, new: Setting) -> bool:
    """False when the old value sits in another workflow job than the new one (a job
    renamed, the old name gone and the new one new, is the same job), or in a job that
    was a placeholder."""
    if not is_yaml(changed.path):
        return True
    before = job_of(side_view(changed, "base"), old.line)
    if not before:
        return True
    if before in placeholder_jobs(changed):
        return False
    after = job_of(side_view(changed, "head"), new.line)
    if not after or after == before:
        return True
    return before not in jobs(changed, "head") and after not in jobs(changed, "base")
