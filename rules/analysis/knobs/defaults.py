"""The knob names each knob-reading rule reads by default, and the union they share.

knob-rationale, threshold-loosening and shard-matrix read the same hunks: parsed once
with one filter over all their names (`knob_changes.hunk_changes` caches per filter).
"""

from __future__ import annotations

from bot.core.config import Config
from rules.analysis.knobs.names import KnobFilter, knob_filter

# What loosening means per kind of knob (threshold-loosening's option defaults).
GATES: tuple[str, ...] = (
    "*threshold", "*min-throughput*", "min-accuracy*", "min-score*", "expected-accuracy*",
    "expected-score*", "*expected-score", "metric-value", "baseline-score*",
)
TOLERANCES: tuple[str, ...] = (
    "rtol", "atol", "*-rtol", "*-atol", "rel-tol", "abs-tol", "*tolerance*",
)
TIMEOUTS: tuple[str, ...] = ("*timeout*", "max-wait*", "*-max-wait*", "*wait-time*")
SAMPLE_COUNTS: tuple[str, ...] = (
    "num-questions", "num-prompts", "num-samples", "n-samples", "num-examples", "max-samples",
    "limit", "*-num-samples", "num-eval-samples",
)
# A gate whose name says it bounds something from above (latency, error) loosens upwards.
UPPER_WORDS: tuple[str, ...] = (
    "max", "latency", "ttft", "tpot", "itl", "e2el", "error", "loss", "time", "duration",
    "diff", "delta", "drop", "regression", "slowdown", "memory",
)
# shard-matrix: keys that hold a shard count or size.
SHARD_SIZE_KEYS: tuple[str, ...] = (
    "part-size", "num-parts", "total-parts", "num-shards", "total-shards", "shard-count",
    "num-partitions", "total-partitions", "auto-partition-size", "splits",
)


def shared_filter(config: Config) -> KnobFilter:
    """The union of every knob-reading rule's names, so they share one parse per hunk."""
    names = list(config.knobs)
    for option, default in (("gates", GATES), ("tolerances", TOLERANCES),
                            ("timeouts", TIMEOUTS), ("sample_counts", SAMPLE_COUNTS)):
        names += config.option("threshold-loosening", option, default)
    names += config.option("shard-matrix", "size_keys", SHARD_SIZE_KEYS)
    names += ("max-parallel", "parallelism")
    return knob_filter(tuple(names))
