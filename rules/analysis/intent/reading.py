"""CI-fix intent of a whole PR: its text, corrected by what its diff changes.

`ci_fix_phrase` reads the title, description and labels, told what the diff is (CI and
test files only; only skips added); the diff then vetoes two
kinds of "fix" that have no failing run: changes that only delete skip markers, and
changes to repository automation alone (bots, slash commands, label/stale managers)
unless the text names a failing test or build, when the reading is tentative.
`follows_up_own_change` tells `dedup-note` that a fix completes the author's own
immediately preceding change ("quick fix for last update"): nobody else races to fix it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.snapshot import PullRequestSnapshot
from rules.analysis.intent.body import ci_fix_phrase, prose_of
from rules.analysis.intent.changes import (
    automation_only,
    ci_files_only,
    only_adds_skips,
    only_unskips,
)
from rules.analysis.intent.words import CI_FAILURE_RE, FAILURE_RE, TEST_NOUN_RE, clauses, near_in
from rules.analysis.prtext.markdown import clean, sentences, split_markdown


@dataclass(frozen=True)
class Reading:
    phrase: str  # why the PR reads as a CI fix (a short quote)
    tentative: bool  # only automation changed, yet the text names a failing test: medium


def _names_failing_test(title: str, prose: str) -> bool:
    """The title or description names a failing test or build (not a bot's own job)."""
    for sentence in (title, *sentences(prose)):
        parts = clauses(sentence)
        if near_in(parts, FAILURE_RE, TEST_NOUN_RE) or near_in(parts, CI_FAILURE_RE, TEST_NOUN_RE):
            return True
    return False


def read_ci_fix(snapshot: PullRequestSnapshot) -> Reading | None:
    """Whether the PR is a fix of a failing CI job or test, and how sure that is."""
    phrase = ci_fix_phrase(snapshot.title, snapshot.body, snapshot.labels,
                           ci_diff=ci_files_only(snapshot.files),
                           adds_skips=only_adds_skips(snapshot.files))
    if phrase is None or only_unskips(snapshot.files):
        return None
    if automation_only(snapshot.files):
        if not _names_failing_test(snapshot.title[:1000], prose_of(snapshot.body)):
            return None
        return Reading(phrase, tentative=True)
    return Reading(phrase, tentative=False)


# "quick fix for last update", "follow-up to #123", "fixup for my previous PR".
_FOLLOW_UP_RE = re.compile(
    r"\b(?:fix(?:es|up)?|follow[- ]?ups?|addendum)\s+(?:for|to|of|on)\s+(?:the\s+|my\s+|our\s+)?"
    r"(?:last|previous|prior|earlier|yesterday'?s?)\s+(?:(?!upstream\b)\w+\s+)?"
    r"(?:updates?|changes?|commits?|prs?|patch|merge|refactor)\b|"
    r"\bfollow[- ]?ups?\s+(?:to|of|for|on)\s+(?:(?:my|our|the)\s+)?"
    r"(?:pr\s*)?(?:#\d+|https://github\.com/[\w.-]+/[\w.-]+/pull/\d+)",
    re.I,
)
_LEAD_CHARS = 600  # the title and the description's opening, not a PR list further down


def follows_up_own_change(title: str, body: str) -> bool:
    """The title or the description's opening calls the PR a fix or follow-up of the
    immediately preceding change ("quick fix for last update", "follow-up to #123")."""
    prose, _ = split_markdown(clean(body))
    return _FOLLOW_UP_RE.search(title[:1000]) is not None or (
        _FOLLOW_UP_RE.search(prose.strip()[:_LEAD_CHARS]) is not None)
