"""Tuning knobs in a diff: names and their categories, values, the settings of a hunk
paired old → new, whether a change loosens a check, and whether it is explained."""

from rules.analysis.knobs.categories import (
    CATEGORY_OPTIONS,
    SHARD_SIZE_KEYS,
    Categories,
    configured_categories,
    loosening_reported,
    shared_filter,
)
from rules.analysis.knobs.changes import Change, hunk_changes, new_unit_lines
from rules.analysis.knobs.churn import readded
from rules.analysis.knobs.entries import last_line
from rules.analysis.knobs.failures import fixes_limit_failure
from rules.analysis.knobs.looseness import loosening, tightening
from rules.analysis.knobs.names import KnobFilter, knob_filter, normalize
from rules.analysis.knobs.namesake import named_by_entry
from rules.analysis.knobs.rationale import (
    RETUNE_REASONS,
    Description,
    adjacent_comment,
    unwrapped,
    value_lines,
)
from rules.analysis.knobs.retunes import (
    MovedSettings,
    new_configuration,
    scaffolding,
    split_across_owners,
)
from rules.analysis.knobs.settings import Setting, extract, holds_yaml_keys
from rules.analysis.knobs.values import number
from rules.analysis.knobs.workloads import follows_entry

__all__ = [
    "CATEGORY_OPTIONS", "RETUNE_REASONS", "SHARD_SIZE_KEYS", "Categories", "Change", "Description",
    "KnobFilter", "MovedSettings", "Setting", "adjacent_comment", "configured_categories",
    "extract", "fixes_limit_failure", "follows_entry", "holds_yaml_keys", "hunk_changes",
    "knob_filter",
    "last_line", "loosening", "loosening_reported", "named_by_entry", "new_configuration",
    "new_unit_lines", "normalize", "number", "readded", "scaffolding", "shared_filter",
    "split_across_owners", "tightening", "unwrapped", "value_lines",
]
