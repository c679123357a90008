"""A speed purpose the title states ("Speed up the DS V2 accuracy test", "Reduce CI
time of the e2e suite") is the reason for the knobs that serve it: a batch size,
parallelism or concurrency raised, a sample count lowered. Other knobs (a memory
fraction, a timeout) are not explained by it, and a title that only names the change
("Raise batch size to 32") states no purpose at all. A title naming another means
("Speed up CI by caching the wheel") speeds up by that means, not by the knob."""

from __future__ import annotations

import re

from rules.analysis.knobs import Change, normalize, number

_SPEED_RE = re.compile(
    r"\b(?:speed(?:s|ing)?[\s-]?up|faster|accelerat\w*|shorten\w*|"
    r"(?:reduce|cut|save|lower|decrease)[sd]?\b[^.\n]{0,30}\b(?:time|runtime|duration|latency)"
    r"|(?:improve|increase|boost)[sd]?\b[^.\n]{0,20}\bthroughput)\b", re.I)
_MEANS_RE = re.compile(r"\b(?:by|via|using|through|with)\b", re.I)
_GENERIC_WORDS = frozenset({"max", "min", "num", "size", "per"})
# Knobs whose larger value does the same work sooner.
_THROUGHPUT_RE = re.compile(
    r"(?:^|-)(?:batch-size|bs|parallel-size|tp|dp|concurrency|max-concurrency|"
    r"num-workers|workers|max-num-seqs|num-threads|jobs|parallelism)$")
# Knobs whose smaller value does less work.
_WORKLOAD_RE = re.compile(
    r"(?:^|-)(?:num-samples|samples|num-prompts|prompts|limit|num-requests|requests|"
    r"iterations|num-iters|iters|steps|epochs)$")


def serves_speed(title: str, change: Change) -> bool:
    """Whether the title's speed purpose explains this change: a throughput knob
    raised (or added), or a workload count lowered."""
    new = change.new
    speed = _SPEED_RE.search(title[:500]) if new is not None else None
    if new is None or speed is None:
        return False
    name = normalize(new.name)
    means = _MEANS_RE.search(title[:500], speed.end())
    if means is not None:
        clause = title[means.end():500].lower()
        words = [w for w in name.split("-") if len(w) >= 2 and w not in _GENERIC_WORDS]
        if not any(w in clause for w in words):
            return False  # sped up by another means the title names
    after = number(new.value)
    before = number(change.old.value) if change.old is not None else None
    if after is None:
        return False
    if _THROUGHPUT_RE.search(name):
        return before is None or after > before
    if _WORKLOAD_RE.search(name):
        return before is not None and after < before
    return False
