"""A context length raised in a PR whose subject is long context.

A PR titled "Add missing long ctx prompt buckets" that adds `--max-model-len 32768` to
its perf run, or "optimize sliding window …" that raises the model cards'
`max_model_len` 4096 → 262144, sets the context length its feature is about: the value
is what the feature is exercised with, not a retune against an OOM or a timeout. Only
the title is read (it names the PR's one subject), only raised or added lengths follow
from it, and a PR that reads as a CI fix is not one of these: a CI fix that raises a
context length is retuning it.
"""

from __future__ import annotations

import re

from bot.core.snapshot import PullRequestSnapshot
from rules.analysis.intent import ci_fix_phrase
from rules.analysis.knobs import Change, number

_CONTEXT_KNOBS = frozenset({
    "max-model-len", "max-seq-len", "max-seq-length", "max-sequence-length",
    "context-length", "max-context-len", "max-context-length", "max-total-tokens",
})
_SUBJECT_RE = re.compile(
    r"\blong[- ]?(?:ctx|context|seq(?:uence)?s?)\b|\bcontext[- ](?:length|len|window)s?\b"
    r"|\bsliding[- ]window\b|\bmax[- ]ctx\b|\b\d+k[- ](?:ctx|context)\b", re.I)


def context_subject(snapshot: PullRequestSnapshot) -> bool:
    """Whether the PR's title names long context as its subject (not a CI fix)."""
    if _SUBJECT_RE.search(snapshot.title[:400]) is None:
        return False
    return ci_fix_phrase(snapshot.title, snapshot.body[:100_000], snapshot.labels) is None


def raises_context(change: Change) -> bool:
    """Whether the change adds or raises a context-length knob."""
    new = change.new
    if new is None or new.name not in _CONTEXT_KNOBS:
        return False
    after = number(new.value)
    if change.old is None:
        return after is not None
    before = number(change.old.value)
    return before is not None and after is not None and after > before
