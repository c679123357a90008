"""Where a PR says it skips tests because they fail ("skip the unit test failures on
ROCm"): then even a skip worded as a capability gate hides a failure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

from rules.analysis.intent import squash_subjects

_SKIP_WORD_RE = re.compile(r"\b(?:skip\w*|disabl\w*|xfail\w*|silenc\w*|deselect\w*)", re.I)
_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+|\n+")
_SHORT_BODY = 5  # sentences: a description this short is about one change


@dataclass(frozen=True)
class PrFailing:
    """Where the PR says it skips tests because they fail ("skip the unit test failures
    on ROCm"): then even a skip worded as a capability gate hides a failure. Said in the
    title or a short description, it covers every gate of the PR; one subject of a
    squash message ("* skip another flaky test": one commit of many) or one sentence of
    a long description covers only the gates it names."""

    everywhere: bool
    sentences: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.everywhere or bool(self.sentences)

    def about(self, names: Iterable[str]) -> bool:
        if self.everywhere:
            return True
        wanted = [n.lower().replace("-", "_") for n in names if len(n) >= 3]
        return any(re.search(rf"(?<![\w]){re.escape(w)}(?![\w])", s)
                   for w in wanted for s in self.sentences)


def says_failing(title: str, body: str, silence_reason: re.Pattern[str]) -> PrFailing:
    """The PR's sentences (or squashed commit subjects) that say tests are skipped
    because they fail."""
    def silences(sentence: str) -> bool:
        return bool(_SKIP_WORD_RE.search(sentence) and silence_reason.search(sentence))

    def found(parts: Iterable[str]) -> tuple[str, ...]:
        return tuple(s.lower().replace("-", "_") for s in parts if silences(s))

    if silences(title):
        return PrFailing(True)
    subjects = squash_subjects(body[:20_000])
    if subjects:  # each subject is its own commit, however few there are
        return PrFailing(False, found(subjects))
    sentences = [s for s in islice(_SENTENCE_RE.split(body[:20_000]), 400) if s.strip()]
    said = found(sentences)
    return PrFailing(bool(said) and len(sentences) <= _SHORT_BODY, said)
