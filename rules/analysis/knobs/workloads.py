"""A workload switch: the entry holding a knob now runs another dataset.

A benchmark case names its data (`dataset_path: GSM8K-in3500-bs2800`) beside its prompt
count, batch size and gates. When a PR points the case at another dataset
(`GSM8K_prefix90_in131072_bs1000`, a 128k-input set), its `num_prompts: 392 → 8` and
`batch_size: 98 → 2` are set for the new workload, not fewer samples of the same: as
for a config moved to another model (`model_identity`), the old value is no baseline.

Read from the YAML key paths of both sides: the dataset key must sit in the same
mapping as the knob (the same case), on each side, and name another dataset (a dataset
moved to another directory is the same one). A case whose dataset is unchanged, or
unknown on a side, is no switch. The server a file starts serves its cases: when one of
them switches dataset, the context and batching limits the file sets (`--max-model-len
32768 → 133120`, `--max-num-seqs`) follow the new inputs too, wherever they sit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs.changes import Change
from rules.analysis.knobs.namesake import named_by_entry
from rules.analysis.memo import memoized
from rules.analysis.yamlscan import YamlLine, base_side, is_yaml, unquote, view

_DATASET_KEYS = frozenset({"dataset", "dataset_path", "dataset_name", "dataset_id",
                           "data_path", "data_file"})
_NEAR = 40  # lines either side where a key of the same case is looked for
# The serving limits sized by the inputs (normalized names): context and batching.
_SERVING_RE = re.compile(r"(?:^|-)(?:max-model-len|max-seq-len\w*|max-num-seqs|"
                         r"max-num-batched-tokens|context-len\w*|max-context\w*)$")


def _dataset(lines: Mapping[int, YamlLine], at: int) -> str | None:
    """The dataset named in the mapping holding line `at` (same enclosing keys)."""
    own = lines.get(at)
    if own is None or own.key is None:
        return None
    for n in range(at - _NEAR, at + _NEAR + 1):
        line = lines.get(n)
        if line is None or line.key is None or line.key.lower() not in _DATASET_KEYS:
            continue
        if line.path == own.path and line.anchors == own.anchors and line.indent == own.indent:
            value = unquote(line.value).strip().rstrip("/")
            return value.rsplit("/", 1)[-1].lower() or None
    return None


def workload_switched(changed: ChangedFile, change: Change) -> bool:
    """Whether the case holding `change` runs another dataset than before."""
    old, new = change.old, change.new
    if old is None or new is None or not _removes_data_key(changed):
        return False
    before = _dataset(base_side(changed), old.line)
    after = _dataset(view(changed).lines, new.line)
    return before is not None and after is not None and before != after


@memoized
def _removes_data_key(changed: ChangedFile) -> bool:
    """Whether a removed line of a YAML file could name a dataset (every key above holds
    "data"): where none does, no case's dataset changed, and the base side's scan is
    spared."""
    return is_yaml(changed.path) and any("data" in line.text.lower()
                                         for line in changed.removed_lines)


@memoized
def _switches_dataset(changed: ChangedFile) -> bool:
    """Whether a case of the file runs another dataset than before."""
    if not _removes_data_key(changed):
        return False
    base, head = base_side(changed), view(changed).lines
    before: dict[tuple[str, ...], str] = {}  # the removed datasets, by key path
    for removed in changed.removed_lines:
        old = base.get(removed.old_no or 0)
        if old is not None and old.key is not None and old.key.lower() in _DATASET_KEYS:
            value = _dataset(base, old.number)
            if value is not None:
                before.setdefault((*old.path, old.key), value)
    for added in changed.added_lines if before else ():
        line = head.get(added.new_no or 0)
        if line is None or line.key is None:
            continue
        was = before.get((*line.path, line.key))
        if was is not None and _dataset(head, line.number) not in (None, was):
            return True
    return False


def follows_entry(changed: ChangedFile, change: Change) -> bool:
    """Whether `change` follows what its entry now is: the value its own name says
    (`namesake`), one set for the case's new dataset, or a serving limit of a file
    whose case switched dataset."""
    if named_by_entry(changed, change) or workload_switched(changed, change):
        return True
    return (change.old is not None and _SERVING_RE.search(change.setting.name) is not None
            and _switches_dataset(changed))
