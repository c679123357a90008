"""Does a PR read as a CI fix? Judged from its title, its description and its labels.

Everything here is linear in the text: the title is capped, the body goes through
`markdown.clean`, and no pattern nests quantifiers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rules.analysis.prtext.evidence import failure_evidence
from rules.analysis.prtext.markdown import clean, quote, sentences, split_markdown

_WINDOW = 8  # words between a verb and its object ("fix the GLM-5.2 PCP eval")

_TAGS_RE = re.compile(r"^\s*((?:\[[^\]\n]{1,40}\]\s*)+)")
_CI_TAG_RE = re.compile(
    r"\b(?:ci|flaky|ci[ -]?failure|ci[ -]?fix|e2e(?:[ -]test(?:s|ing)?)?|ut|unit[ -]?tests?|"
    r"tests?|testing|nightly)\b", re.I)
_LABEL_RE = re.compile(r"flaky|ci[-_ /]?fail|ci[-_ /]?fix|broken[-_ ]?trunk", re.I)
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9_.+/-]*")
# Clause breaks: "Fix scheduler bug and add a test" is a product fix plus coverage.
_CLAUSE_RE = re.compile(r"[,;:()&+|\[\]]|\s(?:and|with|plus|also|then|while)\s", re.I)
_PHRASES = (
    (re.compile(r"\bout[- ]of[- ]memory\b|\boom(?:s|ed|ing|-ing)\b|\boom-?kill\w*"), " oom "),
    (re.compile(r"\btim(?:ed|ing|es)[- ]out\b|\btime[- ]outs?\b"), " timeout "),
    (re.compile(r"\bwork[- ]around\b"), " workaround "),
    (re.compile(r"\bde-flak"), "deflak"),
    (re.compile(r"\bre-tun"), "retun"),
    (re.compile(r"\bregression[- ]tests?\b"), "regressiontest"),
)
_STRONG_RE = re.compile(
    r"^(?:flak(?:y|iness|es|e)|deflak\w*|unflak\w*|stabili[sz](?:e|es|ed|ing|ation)|stability|"
    r"unblock\w*|quarantin\w*|retun(?:e|es|ed|ing))$"
)
_FIX_RE = re.compile(
    r"^(?:fix(?:es|ed|ing)?|hotfix\w*|repair\w*|resolv\w*|mitigat\w*|workaround\w*|"
    r"avoid\w*|prevent\w*|unbreak\w*|revert\w*|"
    r"deflak\w*|stabili[sz]\w*|unblock\w*)$"
)
# Skipping or disabling is a CI fix only when it answers a failure ("skip the flaky
# test", "disable the OOM-ing job"); otherwise it is trigger tuning or clean-up.
_SILENCE_RE = re.compile(r"^(?:skip\w*|disabl\w*|silenc\w*|xfail\w*)$")
# Turning tests back on restores coverage; it does not fix a red job.
_REENABLE_RE = re.compile(
    r"^(?:re-?enabl\w*|enabl\w*|recover\w*|restor\w*|unskip\w*|reactivat\w*|un-?xfail\w*)$")
# Not "pipeline", "runner", "gate", "shard": in vLLM/SGLang those are pipeline
# parallelism, the model runner, MoE gates and weight shards far more often than CI.
_CI_NOUN_RE = re.compile(
    r"^(?:ci|tests?|testing|test_\w+|\w+_test|unittests?|jobs?|builds?|nightly|workflows?|"
    r"evals?|evaluations?|lm[-_]?eval\w*|gsm8k|mmlu|trunk|suites?|buildkite)$"
)
_BODY_FIX_RE = re.compile(
    r"^(?:fix(?:es|ed|ing)?|hotfix\w*|resolv\w*|mitigat\w*|workaround\w*|unbreak\w*|"
    r"revert\w*|deflak\w*|stabili[sz]\w*|unblock\w*)$"
)
_CI_PLACE_RE = re.compile(r"^(?:ci|nightly|trunk|buildkite|jobs?|workflows?)$")
_FAILURE_RE = re.compile(
    r"^(?:fail\w*|flak\w*|broken|breaks?|breakage|red|oom|timeout|hang(?:s|ing)?|stuck|"
    r"crash\w*|segfault\w*|sigsegv|sigkill|regress\w*|intermittent\w*|sporadic\w*|"
    r"nondetermin\w*|non-determin\w*)$"
)
_CI_FAILURE_RE = re.compile(r"^(?:fail\w*|flak\w*|broken|red|intermittent\w*|sporadic\w*)$")
_RETUNE_VERB_RE = re.compile(
    r"^(?:increas\w*|rais\w*|bump\w*|lower\w*|reduc\w*|decreas\w*|relax\w*|loosen\w*|"
    r"tun(?:e|es|ed|ing)|retun\w*|adjust\w*|extend\w*|doubl\w*)$"
)
_KNOB_RE = re.compile(
    r"^(?:timeouts?|time[-_]?limit|memory|mem|mem[-_]fraction\w*|gpu[-_]memory\w*|"
    r"thresholds?|tolerances?|atol|rtol|batch[-_]?size|max[-_]\w+|concurrency|shards?|"
    r"parallelism|retries|reruns|wait)$"
)
# The main verb of routine CI maintenance: new coverage, bumps, logging.
_ROUTINE_VERB_RE = re.compile(
    r"^(?:add|adds|added|adding|introduc\w*|enabl\w*|support\w*|implement\w*|new|extend\w*|"
    r"expand\w*|cover\w*|bump\w*|updat\w*|upgrad\w*|pin|pins|pinned|unpin\w*|document\w*|"
    r"docs?|log|logs|logging|print\w*|debug\w*)$"
)
_ROUTINE_NOUN_RE = re.compile(
    r"\bactions/[\w.-]+|\b(?:coverage|logging|logs?|codeowners|pre-commit|readme|docs?|typos?)\b",
    re.I,
)
_DOCS_RE = re.compile(r"\b(?:typos?|docs?|readme|docstrings?|spelling|grammar|comments?)\b", re.I)
# In a body only "this broke CI" counts: "CI failures are unrelated" is common in feature PRs.
_BODY_BROKE_RE = re.compile(
    r"\b(?:broke|breaks|breaking)\s+(?:the\s+)?(?:ci|trunk|main|nightly|build)\b", re.I
)
_BROKE_RE = re.compile(
    r"\b(?:broke|breaks|breaking|broken|reds?)\s+(?:the\s+)?(?:ci|trunk|main|nightly|build)\b|"
    r"\b(?:ci|trunk|main|nightly)\s+(?:is\s+|was\s+|has\s+been\s+)?(?:red|broken|failing)\b|"
    r"\bci[ -]failures?\b",
    re.I,
)


def _words(text: str) -> list[str]:
    lowered = text.lower()
    for pattern, replacement in _PHRASES:
        lowered = pattern.sub(replacement, lowered)
    return [w.strip("./-+") for w in _WORD_RE.findall(lowered)]


def _clauses(text: str) -> list[list[str]]:
    return [words for part in _CLAUSE_RE.split(text) if (words := _words(part))]


def _near_in(
    clauses: Sequence[Sequence[str]], left: re.Pattern[str], right: re.Pattern[str]
) -> bool:
    return any(_near(words, left, right) for words in clauses)


def _near(words: Sequence[str], left: re.Pattern[str], right: re.Pattern[str]) -> bool:
    """Some word matching `left` within _WINDOW words of one matching `right`."""
    last_left = last_right = -10 * _WINDOW
    for i, word in enumerate(words):
        if left.match(word):
            if i - last_right <= _WINDOW:
                return True
            last_left = i
        if right.match(word):
            if i - last_left <= _WINDOW:
                return True
            last_right = i
    return False


def _title_parts(title: str) -> tuple[str, str]:
    match = _TAGS_RE.match(title)
    if not match:
        return "", title
    return match.group(1), title[match.end():]


def _has_fix_verb(words: Sequence[str]) -> bool:
    return any(_FIX_RE.match(w) for w in words)


def _failure_word(words: Sequence[str]) -> bool:
    return any(_FAILURE_RE.match(w) or _STRONG_RE.match(w) for w in words)


def _reenables(words: Sequence[str]) -> bool:
    """The title turns skipped/disabled tests back on ("Recovered skipped tests")."""
    return any(_REENABLE_RE.match(w) for w in words) and not any(
        _STRONG_RE.match(w) for w in words)


def _title_is_fix(
    rest: str, words: Sequence[str], clauses: Sequence[Sequence[str]], ci_tag: bool
) -> bool:
    routine_noun = _ROUTINE_NOUN_RE.search(rest) is not None and not _has_fix_verb(words)
    strong = any(_STRONG_RE.match(w) for w in words)
    if strong and not routine_noun:
        return True
    if _DOCS_RE.search(rest) and not strong:  # "Fix typo in CI docs"
        return False
    ci_context = ci_tag or any(_CI_NOUN_RE.match(w) for w in words)
    if _reenables(words):
        return False
    if _near_in(clauses, _FIX_RE, _CI_NOUN_RE):
        return True
    # "Fix the spec decode functionality broken" is a product fix: a failure word
    # alone needs CI around it to make the PR a CI fix.
    if ci_context and _near_in(clauses, _FIX_RE, _CI_FAILURE_RE):
        return True
    if _failure_word(words) and (_near_in(clauses, _SILENCE_RE, _CI_NOUN_RE)
                                 or (ci_tag and any(_SILENCE_RE.match(w) for w in words))):
        return True
    if ci_tag and _has_fix_verb(words):  # "[CI] Fix …", "[E2E Testing] Fix HF upload"
        return True
    # "Increase the GLM eval timeout" retunes CI; "Increase max-model-len" changes the product.
    return _near_in(clauses, _RETUNE_VERB_RE, _KNOB_RE) and ci_context and not routine_noun


def _routine(rest: str, words: Sequence[str]) -> bool:
    """Routine maintenance: the title names no fix and adds, bumps or logs something."""
    if _has_fix_verb(words):
        return False
    main = words[0] if words else ""
    return bool(_ROUTINE_VERB_RE.match(main)) or _ROUTINE_NOUN_RE.search(rest) is not None


def _body_fix_sentence(prose: str) -> str | None:
    """A sentence of the body that says the PR fixes CI (narrower than for titles:
    bodies of product fixes also mention tests, crashes and regressions)."""
    for sentence in sentences(prose):
        if _BODY_BROKE_RE.search(sentence):
            return sentence
        clauses = _clauses(sentence)
        if _near_in(clauses, _BODY_FIX_RE, _CI_PLACE_RE):
            return sentence
        if _near_in(clauses, _BODY_FIX_RE, _CI_FAILURE_RE) and _near_in(
            clauses, _CI_FAILURE_RE, _CI_NOUN_RE
        ):
            return sentence
    return None


def _body_failure(prose: str) -> bool:
    """The body says a CI job or test fails ("the PCP4 eval keeps failing with OOM")."""
    return any(
        _near_in(_clauses(sentence), _FAILURE_RE, _CI_NOUN_RE) for sentence in sentences(prose)
    )



def ci_fix_phrase(title: str, body: str, labels: Sequence[str] = ()) -> str | None:
    """Why the PR reads as a CI fix (a short quote), or None for anything else.

    A CI fix says it fixes, stabilizes, unblocks or retunes CI or a flaky, failing,
    OOM-ing or timing-out job or test. Routine CI maintenance (action bumps, new
    coverage, logging, refactors) is not one.
    """
    title = title[:1000]
    tags, rest = _title_parts(title)
    words = _words(rest)
    clauses = _clauses(rest)
    ci_tag = bool(tags) and _CI_TAG_RE.search(tags) is not None
    routine = _routine(rest, words) or _reenables(words)
    if _title_is_fix(rest, words, clauses, ci_tag) or (_BROKE_RE.search(rest) and not routine):
        return quote(title)
    if _near_in(clauses, _FAILURE_RE, _CI_NOUN_RE) and not routine:
        return quote(title)
    prose, _ = split_markdown(clean(body))
    body_sentence = _body_fix_sentence(prose)
    if ci_tag and not routine:
        # A bare `[CI]` tag also marks refactors and moves: the text must name a failure.
        failure_word = any(_FAILURE_RE.match(w) for w in words)
        if failure_word or body_sentence or _body_failure(prose) or failure_evidence(body):
            return quote(title)
    if body_sentence and not routine:
        return quote(body_sentence)
    # "Disable the PP integration test" answering a failure the body states.
    if not routine and _near_in(clauses, _SILENCE_RE, _CI_NOUN_RE) and _body_failure(prose):
        return quote(title)
    label = next((lb for lb in labels if _LABEL_RE.search(lb)), None)
    if label is not None:
        return f"label {label}"
    return None
