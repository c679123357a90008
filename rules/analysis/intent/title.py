"""A PR title read for CI-fix intent: its tags, its conventional-commit type and scope, and
whether its subject names something failing, flaky or red in CI.

Four verdicts: FIX (the title names a failing, flaky or red CI job or test), CLAIM (it
says it fixes CI without naming a failure: the description may say it is a trigger or
report change), NOT (the title says what else it is: a feature, new coverage, a
trigger, a report, a bump), and NEUTRAL (the description decides).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from rules.analysis.intent.topics import infra_topic, meta_topic
from rules.analysis.intent.words import (
    ADJUST_VERB_RE,
    CI_NOUN_RE,
    CLAUSE_RE,
    FAILURE_RE,
    FIX_RE,
    GUARD_RE,
    IMPOSED_LIMIT_RE,
    KNOB_RE,
    REENABLE_RE,
    REMOVE_RE,
    RETUNE_VERB_RE,
    ROUTINE_VERB_RE,
    SILENCE_RE,
    SKIPPED_RE,
    STABILITY_RE,
    TEMPORARY_RE,
    adds_coverage,
    any_word,
    clauses,
    near,
    near_in,
    words,
)


class Verdict(Enum):
    FIX = "fix"  # names something failing, flaky or red in CI
    CLAIM = "claim"  # says it fixes CI or a test, without naming a failure
    NOT = "not"
    NEUTRAL = "neutral"


_TAGS_RE = re.compile(r"^\s*((?:[\[{(][^\]})\n]{1,40}[\]})]\s*:?\s*)+)")
_CONVENTIONAL_RE = re.compile(r"^\s*([a-z]{2,10})(?:\(([^)\n]{1,40})\))?!?\s*:\s*", re.I)
# peft and others start with upper-case type words: "FIX TST …", "CI Fix …", "TST: …".
_CAPS_RE = re.compile(r"^\s*((?:(?:FIX|TST|TEST|CI|ENH|MAINT|CHORE|DOC|DOCS)\b:?\s+)+)")
_CI_TAG_RE = re.compile(
    r"\b(?:ci|cicd|ci/cd|flaky|ci[ -]?failure|ci[ -]?fix|e2e(?:[ -]test(?:s|ing)?)?|ut|"
    r"unit[ -]?tests?|tests?|testing|tst|nightly|lm[ -]?eval|hourly|"
    r"github action|buildkite)\b", re.I)
_CI_TYPES = frozenset({"ci", "test", "tests", "tst"})
_FEATURE_TYPES = frozenset({"feat", "feature", "docs", "doc", "style", "refactor", "perf"})
_BROKE_RE = re.compile(
    r"\b(?:broke|breaks|breaking|broken|reds?)\s+(?:the\s+)?(?:ci|trunk|main|nightly|build)\b|"
    r"\b(?:ci|trunk|main|nightly)\s+(?:is\s+|was\s+|has\s+been\s+)?(?:red|broken|failing)\b|"
    r"\bci[ -]failures?\b",
    re.I,
)
_TOKEN_SPLIT_RE = re.compile(r"[^a-z0-9]+")
_FIX_TOKENS = frozenset({"fix", "fixes", "hotfix", "bugfix", "fixup"})
# "latest": `[FIX_FOR_VLLM_LATEST]`, a fix for what upstream's head broke in the job that
# tests against it. Not `[FIX_FOR_VLLM_CUSTOM=<sha>]`: an adaptation to a chosen upstream
# commit, routine maintenance like a pin bump.
_BREAK_CONTEXT_TOKENS = frozenset({"upstream", "ci", "test", "tests", "e2e", "ut", "nightly",
                                   "hourly", "build", "break", "breakage", "broken", "latest"})
# A job's limits running out: its time limit, or its runner's disk ("resolve no space").
_EXHAUSTED_RE = re.compile(r"^(?:timeouts?|nospace)$")
# Meta topics whose failure words are what they report ("banner on pass/fail", "failure
# summary"); in the others ("Fix Scorecard publish break") a fixed failure is a red job.
_CONTENT_TOPICS = frozenset({"logging", "report", "failure analysis"})
# "P0 CI gate improvements": the subject names improvements, not a failure.
_IMPROVE_RE = re.compile(r"^(?:improv\w*|enhanc\w*|polish\w*|hardening|tweaks?|nits?)$")
_ALWAYS_STABILITY_RE = re.compile(r"^(?:flak\w*|deflak\w*|unflak\w*|quarantin\w*)$")
# CI named anywhere in the subject ("Fix deepseek v2 failing + update CI …"): the fixed
# failure is CI's, as under a `[CI]` tag. Not "job" or "workflow": product words too.
_CI_WORD_RE = re.compile(r"^(?:ci|cicd|ci/cd|nightly|buildkite)$")
_UPSTREAM_RE = re.compile(r"^upstream$")


def _fixed_ci_failure(found: list[str], parts: list[list[str]]) -> bool:
    """A fixed failure that the subject ties to CI without a CI noun beside it: CI named
    in another clause, or a break upstream introduced ("Fix the failing introduced by
    upstream 22685"), the spelled-out `[FIX_DUE_UPSTREAM]` tag: a plugin's CI runs
    against upstream's head."""
    fixed = [p for p in parts if near(p, FIX_RE, FAILURE_RE)]
    return bool(fixed) and (any_word(found, _CI_WORD_RE)
                            or any(any_word(p, _UPSTREAM_RE) for p in fixed))


# Where a second clause starts with a verb it is other work ("Fix X and add a test").
_VERB_RE = re.compile(r"^(?:mak(?:e|es|ing)|set|sets|revert\w*|increas\w*|rais\w*|lower\w*|"
                      r"reduc\w*|remov\w*|drop\w*|\w+ed|\w+ing)$")
_COORDINATOR_RE = re.compile(r"^\s*(?:,|&|\+|\band\b)\s*$", re.I)


def _shared_object(subject: str, lead: list[list[str]]) -> bool:
    """A fix verb whose object is coordinated nouns split at "and" or a comma: "Fix
    pipeline parallel and hybrid kvcache e2e test configurations" fixes both e2e test
    configurations. Not when the second clause starts with a verb or a CI noun ("Fix
    the scheduler and add a test", "fix X and test it"), nor across "with"."""
    if len(lead) < 2 or not FIX_RE.match(lead[0][0]) or any_word(lead[0], CI_NOUN_RE):
        return False
    second = lead[1][0]
    if any(rx.match(second) for rx in (ROUTINE_VERB_RE, FIX_RE, SILENCE_RE, REMOVE_RE,
                                       REENABLE_RE, RETUNE_VERB_RE, GUARD_RE, CI_NOUN_RE,
                                       _VERB_RE)):
        return False
    match = CLAUSE_RE.search(subject)
    if match is None or _COORDINATOR_RE.match(match.group()) is None:
        return False
    first = words(subject[:match.start()])  # the first separator ends the first clause
    return first in (lead[0], lead[0][1:])  # (`fix:` prepends its verb to the clause)


@dataclass(frozen=True)
class Title:
    """A title taken apart: tags/type/scope, the subject, and the CI context they give."""

    tags: str  # the tag, type and scope text before the subject
    subject: str
    kind: str  # the conventional-commit type, lower-cased ("" when there is none)
    ci_label: bool  # a CI tag, a ci/test type or a CI scope
    fix_type: bool  # `fix:`, `fix(…):`, `ci(fix):`, `FIX …`, `[Fix]`

    @staticmethod
    def parse(title: str) -> Title:
        rest, labels, kind = title[:1000], [], ""
        for _ in range(3):  # "[ci] fix: …", "(ci)[SGLang-ATOM]: …", "FIX TST …"
            match = _TAGS_RE.match(rest) or _CAPS_RE.match(rest)
            if match:
                labels.append(match.group(1))
                rest = rest[match.end():]
                continue
            match = _CONVENTIONAL_RE.match(rest)
            if match and not kind:
                kind = match.group(1).lower()
                labels.append(match.group(2) or "")
                rest = rest[match.end():]
                continue
            break
        text = " ".join(labels)
        tokens = set(_TOKEN_SPLIT_RE.split(text.lower()))
        # "[FIX_DUE_UPSTREAM]", "[CI_FIX]": one tag saying a fix of a CI or upstream break.
        ci_fix_tag = bool(tokens & _FIX_TOKENS) and bool(tokens & _BREAK_CONTEXT_TOKENS)
        ci_label = kind in _CI_TYPES or _CI_TAG_RE.search(text) is not None or ci_fix_tag
        fix_type = kind in ("fix", "hotfix", "bugfix") or ci_fix_tag or re.search(
            r"\b(?:fix|bugfix|hotfix)\b", text, re.I) is not None
        return Title(text, rest, kind, ci_label, fix_type)


def _stability(found: list[str], parts: list[list[str]], ci: bool) -> bool:
    """A stability word tied to CI: flaky on its own, OOM/hang/crash under a CI tag or
    near a CI noun of the same clause ("Fix scheduler crash and add a test" is not)."""
    if any_word(found, _ALWAYS_STABILITY_RE):
        return True
    return any_word(found, STABILITY_RE) and (ci or near_in(parts, STABILITY_RE, CI_NOUN_RE))


def _fixes_turned_off_test(parts: list[list[str]]) -> bool:
    """"fix skipped e2e test", "fix the tests skipped on A2": the object of the fix verb is
    a test that was turned off, so the fix turns it back on."""
    for part in parts:
        if not any_word(part, CI_NOUN_RE):
            continue
        for i, word in enumerate(part):
            if FIX_RE.match(word) and any_word(part[i + 1:i + 5], SKIPPED_RE):
                return True
    return False


def _turned_off_for_now(parts: list[list[str]]) -> bool:
    """A test temporarily removed, skipped or disabled in CI: it is failing or flaky."""
    return any(near(part, TEMPORARY_RE, REMOVE_RE) and near(part, REMOVE_RE, CI_NOUN_RE)
               for part in parts)


def judge_title(title: str, ci_diff: bool = False) -> Verdict:
    """The title's verdict (see the module docstring). `ci_diff`: the PR changes only CI
    and test files, so a fixed timeout ("fix the problem gemma accuracy task takes too
    long") is a job's time limit even where the title names no job. Not without the fix
    ("Increase timeout to 12h" retunes the limit), and not a crash or an OOM, which
    product code has too ("Fix scheduler crash and add a test")."""
    parsed = Title.parse(title)
    found, parts = words(parsed.subject), clauses(parsed.subject)
    has_ci_noun = any_word(found, CI_NOUN_RE)
    ci = parsed.ci_label or has_ci_noun
    fix_verb = any_word(found, FIX_RE)
    stable = _stability(found, parts, parsed.ci_label) or (
        ci_diff and (fix_verb or parsed.fix_type) and any_word(found, _EXHAUSTED_RE))
    failing = near_in(parts, FAILURE_RE, CI_NOUN_RE) or (
        parsed.ci_label and any_word(found, FAILURE_RE)) or _BROKE_RE.search(parsed.subject) \
        or _fixed_ci_failure(found, parts)
    # `fix:` / `fix(scope):` is the fix verb of the subject's first clause.
    lead = [["fix", *parts[0]], *parts[1:]] if parsed.fix_type and parts else parts
    if len(lead) > 1 and len(lead[0]) == 1 and FIX_RE.match(lead[0][0]):
        lead = [lead[0] + lead[1], *lead[2:]]  # "Fix and refactor CI testing": one object
    elif _shared_object(parsed.subject, lead):
        lead = [lead[0] + lead[1], *lead[2:]]  # "Fix A and B e2e test configurations"
    topics = f"{parsed.tags}\n{parsed.subject}"
    main = found[0] if found else ""
    topic = meta_topic(topics)
    red_job = topic not in _CONTENT_TOPICS and failing and near_in(parts, FIX_RE, FAILURE_RE)
    # "[bugfix][CI] Skip the log summary when its file is missing": a fix tag beside a CI
    # tag fixes CI's log tooling itself, unless the subject adds to it ("Add logging").
    tagged_fix = topic == "logging" and parsed.fix_type and parsed.ci_label and \
        bool(parsed.tags) and not parsed.kind and not ROUTINE_VERB_RE.match(main)
    if topic and not red_job and not tagged_fix and (
            not stable or (ROUTINE_VERB_RE.match(main) and not fix_verb)):
        return Verdict.NOT  # "[CI] Add logging to debug flaky test_abort" is logging
    if infra_topic(topics) and not (stable or failing):
        return Verdict.NOT
    if parsed.kind in _FEATURE_TYPES and not (stable or (fix_verb and failing)):
        return Verdict.NOT
    if not (fix_verb or stable or failing) and any_word(found, _IMPROVE_RE):
        return Verdict.NOT  # "fix(ci): P0 CI gate improvements": the type is not a failure
    explicit_fix = fix_verb or (parsed.fix_type and parsed.ci_label)
    if not (stable or failing) and (near_in(parts, REENABLE_RE, CI_NOUN_RE)
                                    or _fixes_turned_off_test(parts)):
        return Verdict.NOT  # turning tests back on restores coverage, even "fix and enable"
    if not (fix_verb or stable or failing) and adds_coverage(found):
        return Verdict.NOT  # "[BugFix][CI] add ep CI" is new coverage, whatever the tag
    if (not (explicit_fix or stable) and ROUTINE_VERB_RE.match(main)
            and not near_in(parts, RETUNE_VERB_RE, KNOB_RE)
            and not (ci and any_word(found, IMPOSED_LIMIT_RE))):
        return Verdict.NOT  # new coverage, a move, a bump: routine CI work
    if stable or (failing and (explicit_fix or ci or any_word(found, GUARD_RE, SILENCE_RE))):
        return Verdict.FIX
    if _turned_off_for_now(parts):
        return Verdict.FIX  # "Temporarily removing X from CI": it is unstable, the run shows how
    if near_in(lead, FIX_RE, CI_NOUN_RE) or (explicit_fix and parsed.ci_label):
        return Verdict.CLAIM
    if parsed.fix_type and any(any_word(part, CI_NOUN_RE) and not ROUTINE_VERB_RE.match(part[0])
                               for part in parts):
        return Verdict.CLAIM  # "FIX Issue with disable adapter test", not "fix x and add UT"
    if ci and near_in(parts, ADJUST_VERB_RE, KNOB_RE):
        return Verdict.CLAIM  # "Increase the GLM eval timeout" retunes CI
    # "[CI] Limit `MAX_JOBS` in the install", "CI: Add timeout for the nightly release"
    # impose a limit: the description decides whether something hung or failed without it.
    return Verdict.NEUTRAL
