"""Does the PR description explain a change? A sentence that names it and gives a reason."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Unlike `markdown.sentences`, a `;` ends a sentence here: "raise it; it OOMs" gives
# the reason in its own clause.
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?;])\s+|\n+")
# Words that turn a mention into a reason ("0.3 because ...", "to avoid OOM").
_REASON_RE = re.compile(
    r"\b(?:because|since|due to|so that|so the|to avoid|to prevent|to keep|to stop|to fix|"
    r"otherwise|caused|causes|causing|root cause|in order to|needed|needs|required|"
    r"oom|out of memory|timed? ?out|timeouts?|flaky|flakes?|fails?|failing|failed|"
    r"crash\w*|regress\w*|memory|slow\w*|spikes?|pressure|fragment\w*|reserv\w*)\b",
    re.I,
)


def _normalize(text: str) -> str:
    return text.lower().replace("_", "-")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_SPLIT_RE.split(text) if s.strip()]


def gives_reason(sentence: str) -> bool:
    """Whether a sentence states a reason (a cause, a failure, what it avoids)."""
    return _REASON_RE.search(sentence) is not None


def description_explains(pr_text: str, subjects: Iterable[str]) -> str | None:
    """The sentence of the PR title/body that names a subject and gives a reason."""
    wanted = [_normalize(s) for s in subjects if s]
    if not wanted or not pr_text:
        return None
    for sentence in _sentences(pr_text[:200_000]):
        normalized = _normalize(sentence)
        if any(w in normalized for w in wanted) and _REASON_RE.search(sentence):
            return sentence if len(sentence) <= 200 else sentence[:197] + "..."
    return None
