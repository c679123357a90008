"""Knob categories: which knobs are gates, tolerances, timeouts, sample counts or shard
sizes, by default and as configured, and the union of names the knob rules share.

The categories are configured as options of the rules that report on them
(threshold-loosening's `gates`, … and shard-matrix's `size_keys`), but knob-rationale
and the shared filter need them too: they are read from the config only here.
knob-rationale, threshold-loosening and shard-matrix read the same hunks, parsed once
with one filter over all their names (`changes.hunk_changes` memoizes per filter).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.core.config import Config
from rules.analysis.knobs.names import KnobFilter, knob_filter

# What loosening means per kind of knob (threshold-loosening's option defaults).
GATES: tuple[str, ...] = (
    "*threshold", "*min-throughput*", "min-accuracy*", "min-score*", "expected-accuracy*",
    "expected-score*", "*expected-score", "metric-value", "baseline-score*",
    # Floors and ceilings named by what they bound (`baseline_tokens_per_s`,
    # `minimum_accuracy`, `max_abs_error`, `max_rel_diff`): the metric word says which.
    "baseline-*", "*-baseline", "min-*acc*", "min-*score*", "minimum-*acc*",
    "minimum-*score*", "min-*throughput*", "minimum-*throughput*", "*-floor",
    "max-*error*", "max-*-err", "max-*diff*", "max-*delta*", "max-*-drop",
    "max-*regression*", "max-*latency*", "max-*ttft*", "max-*tpot*",
    "*pass-rate*", "*success-rate*",
    # Performance floors: a minimum speedup or rate (`min_speedup=1.1`,
    # `min_tokens_per_sec`, `min_output_tps`). Only `min`/`minimum`/`expected` joined to a
    # performance word: most `min_*` knobs bound a shape (`min_tokens`, `min_p`), not a
    # result. Rates are "per second", not bare counts.
    "min-*speedup*", "minimum-*speedup*", "*-min-speedup*", "expected-*speedup*",
    "min-*-per-s", "min-*-per-sec*", "min-*-per-second*", "minimum-*-per-s",
    "minimum-*-per-sec*", "minimum-*-per-second*", "min-*tps", "min-*qps",
    "min-*goodput*", "min-*tflops*", "min-*mfu*", "min-*bandwidth*",
)
TOLERANCES: tuple[str, ...] = (
    "rtol", "atol", "*-rtol", "*-atol", "rel-tol", "abs-tol", "*tolerance*",
)
TIMEOUTS: tuple[str, ...] = (
    "*timeout*", "max-wait*", "*-max-wait*", "*wait-time*", "*time-limit", "walltime",
    "max-time", "time",  # `time` only when written as a clock (`00:30:00`)
)
SAMPLE_COUNTS: tuple[str, ...] = (
    "num-questions", "num-prompts", "num-samples", "n-samples", "num-examples", "max-samples",
    "limit", "*-num-samples", "num-eval-samples",
    # Repeats averaged into one score: fewer is a noisier gate, like fewer samples.
    "repeats", "num-repeats", "n-repeats", "*-repeats", "num-runs", "num-trials",
    "sample-size", "max-examples", "num-problems",
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


_LOOSENING = "threshold-loosening"
_SHARDS = "shard-matrix"
# threshold-loosening's options.
CATEGORY_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "gates": GATES, "tolerances": TOLERANCES, "timeouts": TIMEOUTS,
    "sample_counts": SAMPLE_COUNTS, "upper_bound_words": UPPER_WORDS,
}


@dataclass(frozen=True)
class Categories:
    """Which knobs are gates, tolerances, timeouts or sample counts, and their direction."""

    gates: tuple[str, ...] = GATES
    tolerances: tuple[str, ...] = TOLERANCES
    timeouts: tuple[str, ...] = TIMEOUTS
    sample_counts: tuple[str, ...] = SAMPLE_COUNTS
    upper_words: tuple[str, ...] = UPPER_WORDS
    _kinds: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    def kind(self, name: str) -> str | None:
        """tolerance | timeout | samples | gate (looser when lower) | ceiling (when higher)."""
        if name not in self._kinds:
            self._kinds[name] = self._kind(name)
        return self._kinds[name]

    def _kind(self, name: str) -> str | None:
        if knob_filter(self.tolerances)(name):
            return "tolerance"
        if knob_filter(self.timeouts)(name):
            return "timeout"
        if knob_filter(self.sample_counts)(name):
            return "samples"
        if knob_filter(self.gates)(name):
            words = set(name.split("-"))
            return "ceiling" if any(w in words for w in self.upper_words) else "gate"
        return None

    def names(self) -> tuple[str, ...]:
        """Every categorized knob name (the direction words name no knob)."""
        return self.gates + self.tolerances + self.timeouts + self.sample_counts

    def wanted(self) -> KnobFilter:
        return knob_filter(self.names())

    def gate_filter(self) -> KnobFilter:
        """Gates, ceilings and sample counts: the knobs whose removal can loosen."""
        return knob_filter(self.gates + self.sample_counts)


def configured_categories(config: Config) -> Categories:
    """The categories as configured (threshold-loosening's options), defaults otherwise."""
    def option(name: str) -> tuple[str, ...]:
        return tuple(config.option(_LOOSENING, name, CATEGORY_OPTIONS[name]))

    return Categories(option("gates"), option("tolerances"), option("timeouts"),
                      option("sample_counts"), option("upper_bound_words"))


def loosening_reported(config: Config) -> bool:
    """Whether loosened knobs are reported (by threshold-loosening), so others skip them."""
    return config.settings(_LOOSENING).enabled


def shared_filter(config: Config) -> KnobFilter:
    """The union of every knob-reading rule's names, so they share one parse per hunk."""
    names = list(config.knobs)
    names += configured_categories(config).names()
    names += config.option(_SHARDS, "size_keys", SHARD_SIZE_KEYS)
    names += ("max-parallel", "parallelism")
    return knob_filter(tuple(names))
