"""The config's defaults that are data: the knob vocabulary and the dedup heading."""

from __future__ import annotations

DEFAULT_KNOBS: tuple[str, ...] = (
    "mem-fraction-static",
    "gpu-memory-utilization",
    "max-num-batched-tokens",
    "max-model-len",
    "max-num-seqs",
    "max-concurrency",
    "cuda-graph-*",
    "*capture-sizes*",
    "*cuda-graph-bs*",
    "*timeout*",
    "max-wait*",
    "*accuracy-threshold*",
    "*threshold",
    "rtol",
    "atol",
    "min-throughput",
    "batch-size",
    "cache-max-entry-count",
    "num-questions",
    "num-fewshot",
    "num-prompts",
    "*-parallel-size",
    "tp",
    "dp",
    # Parallelism as scripts name it (`TP_SIZE=4 pytest …`, sglang's `--tp-size`).
    "tp-size",
    "dp-size",
    "pp-size",
    "ep-size",
    "*concurrency*",
    "parallel",
    "parallelism",
    # Poll, retry and start-up budgets: how long a gate waits before it gives up.
    "max-attempts",
    "*-max-attempts",
    "num-attempts",
    "max-retries",
    "*-max-retries",
    "num-retries",
    "retry-count",
    "*poll-interval*",
    "*retry-interval*",
    "*retry-delay*",
    "*sleep-seconds*",
    "*sleep-secs",
    "*sleep-time*",
    "init-sleep*",
    "*startup-wait*",
    "*startup-delay*",
    # Build parallelism: more jobs build faster and need more memory (OOM vs time).
    "max-jobs",
    "nvcc-threads",
    "cmake-build-parallel-level",
)

# Headings that mark a duplicate-work check. Bounded repetitions only: PR bodies are
# attacker-controlled, and `\s*` runs against long whitespace backtrack badly.
DEFAULT_DEDUP_HEADING = (
    r"(?im)^[ \t]{0,3}(?:#{1,6}|\*\*)?[ \t]{0,3}"
    r"(?:duplicate[- ]?(?:work|check|search|prs?|issues?)|duplicates\b|dedup\w*"
    r"|not a duplicate|related (?:prs?|work|issues?|pull requests?)|similar prs?"
    r"|overlapping (?:prs?|work)|prior (?:art|work|prs?)|existing (?:prs?|work|issues?))"
)
