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


# A removal that says where the test still runs, or why it never needed to.
_RELOCATED_RE = re.compile(
    r"\b(?:duplicat\w*|twice|redundant|already (?:run|ran|runs|covered|tested|included)\w*|"
    r"covered (?:by|in|elsewhere|already)|(?:moved|migrated|folded|merged) (?:to|into|in)\b|"
    r"now (?:runs?|run|lives|covered) (?:in|by|as|under|via|from)|"
    r"(?:runs?|run|ran) (?:in|as part of|under|via) (?:the )?[\w`./-]+ (?:workflow|job|suite|"
    r"target|step|pipeline)|replaced (?:by|with)|superseded|orphan\w*|obsolete|"
    r"no longer (?:needed|necessary|used|exists?|relevant)|not needed|unused|consolidat\w*|"
    r"never existed|dead code|(?:included|contained) in)\b",
    re.I,
)
# The sentence must be about taking it out (not a mention of the same suite elsewhere).
_REMOVING_RE = re.compile(
    r"\b(?:remov\w*|drop\w*|delet\w*|dedup\w*|retir\w*|prun\w*|get rid|moved?|moving|"
    r"migrat\w*|fold\w*|merg\w*|consolidat\w*|replac\w*|collaps\w*)\b", re.I)
_BLOCK_SPLIT_RE = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
_PROSE_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+")


def prose_sentences(text: str) -> list[str]:
    """Sentences of a description whose lines are hard-wrapped (commit messages): a
    paragraph or list item is unwrapped before it is split."""
    out: list[str] = []
    for block in _BLOCK_SPLIT_RE.split(text):
        flat = " ".join(block.split())
        out.extend(s for s in _PROSE_SENTENCE_RE.split(flat) if s)
    return out


def description_relocates(pr_text: str, subjects: Iterable[str],
                          failing: re.Pattern[str]) -> str | None:
    """The sentence of the PR title/body that names a removed test or command and says
    it is covered elsewhere ("duplicate of …", "moved to …", "orphaned"), without
    saying that it fails (a removal because of a failure stays a silencing). The
    sentence must say it takes something out (removes, drops, moves, folds …)."""
    wanted = [_normalize(s) for s in subjects if len(s) >= 4]
    if not wanted or not pr_text:
        return None
    for sentence in prose_sentences(pr_text[:200_000])[:2_000]:
        normalized = _normalize(sentence)
        if any(w in normalized for w in wanted) and _RELOCATED_RE.search(sentence) and \
                _REMOVING_RE.search(sentence) and failing.search(sentence) is None:
            return sentence if len(sentence) <= 200 else sentence[:197] + "..."
    return None
