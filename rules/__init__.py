"""The rule pack. `ALL_RULES` is explicit so the registry order is reviewable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.allocator_scope import AllocatorScope
from rules.base import Rule
from rules.block_scalar_comment import BlockScalarComment
from rules.dedup_note import DedupNote
from rules.failing_run_link import FailingRunLink
from rules.knob_rationale import KnobRationale
from rules.parallel_state_patch import ParallelStatePatch
from rules.runtime_download import RuntimeDownload
from rules.shard_matrix import ShardMatrix
from rules.silenced_test import SilencedTest
from rules.threshold_loosening import ThresholdLoosening

ALL_RULES: tuple[Rule, ...] = (
    AllocatorScope(),
    ParallelStatePatch(),
    DedupNote(),
    FailingRunLink(),
    KnobRationale(),
    ThresholdLoosening(),
    RuntimeDownload(),
    BlockScalarComment(),
    SilencedTest(),
    ShardMatrix(),
)

RULES_BY_ID: Mapping[str, Rule] = {rule.id: rule for rule in ALL_RULES}


def option_specs() -> dict[str, Mapping[str, Any]]:
    """Rule id → option defaults, as config validation needs them."""
    return {rule.id: rule.options for rule in ALL_RULES}
