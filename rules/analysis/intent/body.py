"""CI-fix intent from the title, the description and the labels together.

The title decides when it can (FIX or NOT); a NEUTRAL title ("Disable the PP
integration test") is a CI fix when the description says a CI job or test fails.
A squash message without the PR description is a list of commit subjects: a short list
is read for topics ("* fix cron time") when the title only claims a fix, and the
subjects' fix claims count like a body's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rules.analysis.intent.title import Title, Verdict, judge_title
from rules.analysis.intent.topics import infra_topic, meta_topic
from rules.analysis.intent.words import (
    BODY_BROKE_RE,
    BODY_FIX_RE,
    CI_FAILURE_RE,
    CI_NOUN_RE,
    CI_PLACE_RE,
    DETERMINISM_RE,
    KNOB_RE,
    RETUNE_VERB_RE,
    SILENCE_RE,
    STABILITY_RE,
    any_word,
    clauses,
    near_in,
    words,
)
from rules.analysis.prtext.evidence import failure_evidence
from rules.analysis.prtext.markdown import clean, quote, sentences, split_markdown

_LABEL_RE = re.compile(r"flaky|ci[-_ /]?fail|ci[-_ /]?fix|broken[-_ ]?trunk", re.I)
_BULLET_RE = re.compile(r"^\s*[*-]\s+(\S.{0,200})$")
_SIGNOFF_RE = re.compile(r"^\s*(?:signed-off-by|co-authored-by|-{3,})", re.I)
def squash_subjects(body: str) -> list[str]:
    """The commit subjects of a squash message that is only a bullet list of them,
    else [] (a PR description is not one)."""
    subjects: list[str] = []
    for line in clean(body).splitlines()[:200]:
        if not line.strip() or _SIGNOFF_RE.match(line):
            continue
        match = _BULLET_RE.match(line)
        if match is None:
            return []
        subjects.append(match.group(1))
    return subjects


def who_reads(title: str, phrase: str) -> str:
    """"This PR" when the phrase quotes the title (or a label), else "This PR's
    description": a quoted body sentence must not read as if it were the title."""
    if phrase == quote(title[:1000]) or phrase.startswith("label "):
        return "This PR"
    return "This PR's description"


# Lines a squash merge or a PR-template bot appends, which say nothing about the change:
# git trailers ("Signed-off-by:", "Co-authored-by:", "Change-Id:"), "----" rules, and
# version stamps ("- vLLM version: v0.10.2", "- vLLM main: <url>", the url often wrapped).
_TRAILER_RE = re.compile(
    r"^\s*(?:[a-z][\w-]{0,30}-by:|change-id:|-{3,}\s*$|\(cherry[- ]picked from\b|"
    r"[*-]\s*[\w.-]{1,30}\s+(?:version|main)\s*:)",
    re.I,
)
_STAMP_RE = re.compile(r"^\s*[*-]\s*[\w.-]{1,30}\s+(?:version|main)\s*:\s*$", re.I)
_URL_LINE_RE = re.compile(r"^\s*<?https?://\S+>?\s*$")


def _is_trailer(lines: Sequence[str]) -> list[bool]:
    """Which lines are trailers, rules or version stamps (with a stamp's wrapped url)."""
    flags: list[bool] = []
    stamp = False
    for line in lines:
        if not line.strip():
            flags.append(False)  # a blank line between a stamp and its url
            continue
        if stamp and _URL_LINE_RE.match(line):
            flags.append(True)
            stamp = False
            continue
        flags.append(_TRAILER_RE.match(line) is not None)
        stamp = flags[-1] and _STAMP_RE.match(line) is not None
    return flags


def _only_trailers(body: str) -> bool:
    """Every line of the body is a trailer, a rule or a version stamp (with its wrapped url)."""
    lines = [line for line in clean(body).splitlines()[:200] if line.strip()]
    return all(_is_trailer(lines))


def prose_of(body: str) -> str:
    """The description's prose without its trailers: "Signed-off-by: … <x-email@…>" is
    not a PR about e-mail, nor a version stamp a PR about versions."""
    prose, _ = split_markdown(clean(body))
    lines = prose.splitlines()
    return "\n".join(line for line, trailer in zip(lines, _is_trailer(lines), strict=True)
                     if not trailer)


def described(body: str) -> bool:
    """Whether the body is a PR description: not empty, not only squashed commit subjects
    or trailers (a commit message without the PR's description: the rules cannot see what
    it said)."""
    return bool(clean(body).strip()) and not squash_subjects(body) and not _only_trailers(body)


# "This also fixes the CI error …": a side effect of the work the title names.
_SIDE_FIX_RE = re.compile(
    r"\b(?:also|additionally|incidentally|besides|along the way|as a side effect)\W+"
    r"(?:\w+\W+){0,3}?(?:fix|fixes|fixed|fixing|resolves?|resolved|unblocks?|unbreaks?)\b",
    re.I,
)


def _body_fix_sentence(prose: str) -> str | None:
    """A sentence of the body that says the PR fixes CI (narrower than for titles:
    bodies of product fixes also mention tests, crashes and regressions). A fix the
    body calls a side effect ("this also fixes the CI error") does not make the PR a CI
    fix: its title names the work it is."""
    for sentence in sentences(prose):
        if _SIDE_FIX_RE.search(sentence):
            continue
        if BODY_BROKE_RE.search(sentence):
            return sentence
        parts = clauses(sentence)
        if meta_topic(sentence) and not near_in(parts, CI_FAILURE_RE, CI_NOUN_RE):
            continue  # "Fixes CodeQL warning 'Workflow does not contain permissions'"
        if near_in(parts, BODY_FIX_RE, CI_PLACE_RE):
            return sentence
        if near_in(parts, BODY_FIX_RE, CI_FAILURE_RE) and near_in(
            parts, CI_FAILURE_RE, CI_NOUN_RE
        ):
            return sentence
    return None


def _body_failure(prose: str) -> bool:
    """The body says a CI job or test fails ("the PCP4 eval keeps failing with OOM")."""
    return any(
        near_in(clauses(s), CI_FAILURE_RE, CI_NOUN_RE) or near_in(
            clauses(s), STABILITY_RE, CI_NOUN_RE)
        for s in sentences(prose)
    )


# A description of a flake in other words: results that vary from run to run.
_FLAKE_RE = re.compile(
    r"\b(?:fluctuat\w*|flak\w*|intermittent\w*|sporadic\w*|non-?determinis\w*|unstable|"
    r"instability|run[- ]to[- ]run)\b|"
    r"\b(?:sometimes|occasionally|randomly)\b.{0,60}?\b(?:fail\w*|fall\w*|drop\w*|below|"
    r"under|miss\w*|differ\w*)\b",
    re.I,
)


# Template headings and labels ("## Purpose", "**Summary**", "SUMMARY:") are not prose.
_HEADING_RE = re.compile(r"^\s*(?:#{1,6}\s.*|\*\*[^*\n]{1,80}\*\*\s*:?|[\w /-]{1,40}:)\s*$")


def _lead(prose: str, count: int = 2) -> list[str]:
    """The description's first sentences, below any template heading."""
    text = "\n".join(line for line in prose.splitlines()[:60] if not _HEADING_RE.match(line))
    return [s for _, s in zip(range(count), sentences(text), strict=False)]


def _other_work(prose: str) -> bool:
    """The description opens by saying what else the PR is (a trigger, a report, …)
    and names no failing job or test."""
    lead = _lead(prose)
    text = "\n".join(lead)
    if not (meta_topic(text) or infra_topic(text)):
        return False
    if any(_FLAKE_RE.search(s) for s in sentences(prose)):
        return False  # "… was the root cause of the intermittent GPU OOM errors"
    return not any(near_in(clauses(s), CI_FAILURE_RE, CI_NOUN_RE) for s in lead)


# Tests that fail only when run on their own, and pass in the suite CI runs: a test
# isolation fix, with no failing CI run ("fail when run individually").
_ISOLATED_RE = re.compile(
    r"\b(?:run|ran|running|executed|invoked)\s+(?:individually|alone|separately|standalone|"
    r"in isolation|on (?:its|their) own|one by one|by (?:itself|themselves))\b|"
    r"\bonly pass\w* when (?:the )?(?:whole|full|entire) (?:test )?suite\b",
    re.I,
)


def _isolation_only(prose: str) -> bool:
    return _ISOLATED_RE.search(" ".join(prose[:20_000].split())) is not None


_URL_RE = re.compile(r"https?://\S+")


def _states_failure(body: str, prose: str) -> bool:
    """The description says a CI job or test fails, or pastes its error. A run link
    alone does not: "have tested in <run>" under "How was this patch tested" is the
    PR's own green run."""
    return _body_failure(prose) or failure_evidence(_URL_RE.sub(" ", body)) is not None


def _remedies_a_flake(parsed: Title, prose: str) -> bool:
    """A title naming a determinism remedy for tests ("Set seeds for e2e tests") whose
    description says the results varied: a flake fix titled by its remedy."""
    found = words(parsed.subject)
    if not any_word(found, DETERMINISM_RE):
        return False
    if not (parsed.ci_label or any_word(found, CI_NOUN_RE)):
        return False
    return any(_FLAKE_RE.search(s) for s in sentences(prose))


_MAX_SUBJECTS = 8  # a 50-commit squash list mentions everything ("update docs") somewhere


def _other_subjects(subjects: list[str]) -> bool:
    """A short squash list whose subjects name other work (a schedule, a report, …)."""
    if not subjects or len(subjects) > _MAX_SUBJECTS:
        return False
    text = "\n".join(subjects)
    return meta_topic(text) is not None or infra_topic(text) is not None


def ci_fix_phrase(title: str, body: str, labels: Sequence[str] = (), *, ci_diff: bool = False,
                  adds_skips: bool = False) -> str | None:
    """Why the PR reads as a CI fix (a short quote), or None for anything else. What the
    diff says: `ci_diff`, it changes only CI and test files (see `judge_title`);
    `adds_skips`, all it does is skip, xfail or comment out tests, which answers a
    failure unless the title or description says it is other work."""
    subjects = squash_subjects(body)
    verdict = judge_title(title, ci_diff)
    if verdict is Verdict.CLAIM and _other_subjects(subjects):
        verdict = Verdict.NOT  # "[nightly] fix job order" + "* move the cron to Sunday"
    label = next((lb for lb in labels if _LABEL_RE.search(lb)), None)
    prose = prose_of(body)
    if verdict is Verdict.CLAIM and not subjects and _other_work(prose):
        verdict = Verdict.NOT  # "[CI][BugFix] …": the description says it is trigger logic
    if verdict is Verdict.CLAIM and not subjects and _isolation_only(prose):
        verdict = Verdict.NOT  # "Fix for individual unit tests": they pass in CI's suite
    if verdict in (Verdict.FIX, Verdict.CLAIM):
        return quote(title)
    if verdict is Verdict.NOT:
        return None if label is None else f"label {label}"
    body_sentence = _body_fix_sentence("\n".join(subjects) if subjects else prose)
    if body_sentence:
        return quote(body_sentence)
    parsed = Title.parse(title)
    if not subjects and _remedies_a_flake(parsed, prose):
        return quote(title)  # "[CI] Set seeds for e2e tests" + "accuracy fluctuates under …"
    failure = not subjects and _states_failure(body, prose)
    parts = clauses(parsed.subject)
    if failure and (parsed.ci_label or near_in(parts, SILENCE_RE, CI_NOUN_RE)
                    or (parsed.fix_type and near_in(parts, RETUNE_VERB_RE, KNOB_RE))):
        # A bare `[CI]` tag, "Disable the PP test" or "fix: lower the accuracy threshold"
        # answers the failure the body states ("Increase timeout" + "prevents stuck
        # jobs" is a preventive limit).
        return quote(title)
    if adds_skips and not (_other_subjects(subjects) or (not subjects and _other_work(prose))):
        return quote(title)  # "CI: skip tests when building gfx942 …": a test that fails there
    return None if label is None else f"label {label}"
