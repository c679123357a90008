"""The vocabulary of CI-fix intent: words, clauses, and which word classes sit near.

A title is read as words in clauses ("Fix scheduler bug and add a test" is two clauses);
a class of word counts only near another (a fix verb near a CI noun, a failure word
near a test or job), never by its mere presence. Everything is linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

WINDOW = 8  # words between a verb and its object ("fix the GLM-5.2 PCP eval")

_WORD_RE = re.compile(r"[a-z0-9][a-z0-9_.+/-]*")
# Clause breaks: "Fix scheduler bug and add a test" is a product fix plus coverage.
CLAUSE_RE = re.compile(r"[,;:()&+|\[\]]|\s(?:and|with|plus|also|then|while)\s", re.I)
# A time limit being added or set ("Add timeout for the nightly release", "set a 60 min
# timeout on the e2e step", "add `timeout-minutes`") is the knob, not a run that timed
# out: a preventive limit. Only the noun such a verb takes, past a few modifiers (no
# preposition, no remedy between): not "add retry for timeout", "add timeout handling".
_IMPOSING_VERB = (r"(?:add(?:s|ed|ing)?|set(?:s|ting)?|put(?:s|ting)?|limit(?:s|ed|ing)?|"
                  r"cap(?:s|ped|ping)?|(?:introduc|configur|enforc|impos|defin)(?:e|es|ed|ing)|"
                  r"(?:appl|specif)(?:y|ies|ied|ying))")
_NOT_MODIFIER = (r"(?:to|for|on|in|of|at|from|since|because|after|due|when|if|and|or|with|as|"
                 r"by|that|which|retr\w*|handl\w*|fix\w*|avoid\w*|prevent\w*|catch\w*|"
                 r"detect\w*)\b")
_LIMIT_NOUN = r"(?:time-?outs?|time[- ]limits?)(?:[-_](?:minutes|seconds|secs?))?\b"
_NOT_AFTER = r"[- ](?:handl\w*|errors?|exceptions?|issues?|problems?|bugs?|failures?|retr\w*)\b"
_IMPOSED_LIMIT = re.compile(rf"\b({_IMPOSING_VERB}(?:\s+(?!{_NOT_MODIFIER})[\w.-]+){{0,4}}?)"
                            rf"\s+[`'\"]?{_LIMIT_NOUN}(?!{_NOT_AFTER})")
_PHRASES = (
    # Before the "timed out" rewrite below: "the job times out" stays a run that timed out.
    (_IMPOSED_LIMIT, r"\1 timelimit"),
    (re.compile(r"\bout[- ]of[- ]memory\b|\boom(?:s|ed|ing|-ing)\b|\boom-?kill\w*"), " oom "),
    (re.compile(r"\btim(?:ed|ing|es)[- ]out\b|\btime[- ]outs?\b"), " timeout "),
    (re.compile(r"\bwork[- ]around\b"), " workaround "),
    # "Remove the X workaround in the tests": the fix is the object of the removal, a
    # cleanup once the bug it worked around is fixed (not "remove X to work around …").
    (re.compile(r"\b((?:remov|delet|drop|revert|undo|retir)\w*|clean(?:s|ed|ing)? up|"
                r"get(?:s|ting)? rid of)((?:\s+(?!to\b|and\b|or\b)[\w.-]+){0,4}?)\s+"
                r"(?:workarounds?|hotfix(?:es)?|hacks?|wars?)\b"), r"\1\2 oldpatch"),
    (re.compile(r"\bde-flak"), "deflak"),
    # "3 hourly-CI fixes", "AMD-CI failures": CI named by a compound's last part.
    (re.compile(r"\b([a-z0-9]+)-ci\b"), r"\1 ci"),
    (re.compile(r"\bre-tun"), "retun"),
    (re.compile(r"\bregression[- ]tests?\b"), "regressiontest"),
    (re.compile(r"\bpre-commit\b"), "precommit"),
    (re.compile(r"\bunit[- ]tests?\b"), "unittest"),
    # A job that "takes too long" hits its time limit (not "the name is too long").
    (re.compile(r"\b(?:takes?|taking|took|runs?|running|ran)\s+(?:\w+\s+)?too\s+"
                r"(?:long|slow(?:ly)?)\b|\b(?:is|are|was|were|gets?|got)\s+(?:\w+\s+)?"
                r"too\s+slow\b"), " timeout "),
    # "comment out the failing tests" silences them ("commented out" is their state).
    (re.compile(r"\bcomment(?:s|ing)?[- ]out\b"), " commentout "),
    # "make test_platform UT stable": the verb of stabilizing, spelled with "make".
    (re.compile(r"\bmak(?:e|es|ing)\b(?=(?:\s+[\w.-]+){1,5}?\s+(?:more\s+)?stable\b)"),
     "stabilize"),
    # A runner's disk filling up ("No space left on device", "resolve no space").
    (re.compile(r"\bno (?:disk )?space(?: left)?(?: on (?:the )?device)?\b|\bdisk (?:is )?full\b|"
                r"\bout of disk(?: space)?\b"), " nospace "),
    # A failure as the condition a new behaviour reacts to ("24h when failing", "back off
    # if the job fails", "upload logs on failure", "retry failed jobs"): nothing is being
    # fixed. Not a failure before the condition ("test fails when run on A2").
    (re.compile(r"\b((?:when(?:ever)?|if|unless)(?:\s+(?!(?:and|or|but|so|then)\b)[\w.-]+){0,3}?"
                r"|(?:on|upon)(?:\s+(?:a|an|any|the|its|their))?"
                r"(?:\s+(?:jobs?|tests?|steps?|builds?|runs?|ci|pipelines?|workflows?))?"
                r"|(?:retr(?:y|ies|ied|ying)|re-?run(?:s|ning)?)(?:\s+(?:a|an|all|any|the|only))?"
                r"(?:\s+[\w.-]+)?)\s+fail(?:s|ed|ing|ures?)?\b"), r"\1 onfail"),
    # Failures the new behaviour deals with ("Handle upload failures", "tolerate transient
    # errors", "recover from job failures", "guard against download errors"): a class of
    # failure, plural or bare, as the object of handling, like "retry failed jobs". Not a
    # concrete breakage: "the upload failure", "failures caused by #123", "handle the crash"
    # (a crash is a stability word, never rewritten), nor "Fix upload failures".
    (re.compile(r"\b((?:handl|catch|tolerat|surviv)\w*|recover\w*\s+from|guard\w*\s+against|"
                r"(?:be|make\s+[\w.-]+)\s+resilient\s+to)"
                r"((?:\s+(?!(?:the|this|that|these|those|its|their)\b)[\w.-]+){0,3}?)\s+"
                r"(?:fail(?:ures|s)|errors|exceptions)\b(?!\s+(?:caused|introduced|since|"
                r"after|due|from|of\s+#))"), r"\1\2 onfail"),
    # "fixed seed", "fixed-size": an adjective, not the verb.
    (re.compile(r"\bfixed[- ](?=(?:random\s+)?(?:seeds?|sizes?|lengths?|shapes?|points?|"
                r"widths?|values?|order|ports?)\b)"), "constant "),
)

# Words that say something in CI is failing, flaky or red.
STABILITY_RE = re.compile(
    r"^(?:flak(?:y|iness|es|e)|deflak\w*|unflak\w*|stabili[sz](?:e|es|ed|ing|ation)|stability|"
    r"instability|unstable|unblock\w*|quarantin\w*|intermittent\w*|sporadic\w*|"
    r"nondetermin\w*|non-determin\w*|oom|hang(?:s|ing)?|hung|stuck|deadlock\w*|"
    r"crash\w*|segfault\w*|sigsegv|sigkill|timeout)$"
)
FAILURE_RE = re.compile(
    r"^(?:fail(?:s|ed|ing|ure|ures)?|broke|broken|breaks?|breakage|red|"
    # "startup_failures", "build-failed": a compound naming what failed.
    r"\w*errors?|[\w.-]+[_-]fail(?:s|ed|ing|ure|ures)?|exceptions?|429|nans?|killed|"
    r"inconsistent)$"
)
FIX_RE = re.compile(
    r"^(?:fix(?:es|ed|ing)?|hotfix\w*|repair\w*|resolv\w*|mitigat\w*|workaround\w*|war|"
    r"unbreak\w*|deflak\w*|stabili[sz]\w*|unblock\w*|restor\w*)$"
)
# "avoid"/"prevent" fix something only when what they avoid is a failure ("to avoid 429").
GUARD_RE = re.compile(r"^(?:avoid\w*|prevent\w*|handl\w*|tolerat\w*|retr(?:y|ies|ied))$")
# Skipping or disabling answers a failure only when the failure is named.
SILENCE_RE = re.compile(r"^(?:skip\w*|disabl\w*|silenc\w*|xfail\w*|mark\w*|commentout)$")
REENABLE_RE = re.compile(
    r"^(?:re-?enabl\w*|enabl\w*|recover\w*|unskip\w*|reactivat\w*|un-?xfail\w*)$")
# "fix skipped e2e test", "fix the disabled UT": the object is a test that was turned off.
SKIPPED_RE = re.compile(r"^(?:skip+e?d|disabled|xfail(?:ed)?|ignored|commented)$")
# "Temporarily removing granite-4-h from CI": a test turned off until it is stable again.
TEMPORARY_RE = re.compile(r"^temporarily$")  # not "temporary files"
REMOVE_RE = re.compile(r"^(?:remov\w*|exclud\w*|drop(?:s|ped|ping)?|comment\w*|"
                       r"skip\w*|disabl\w*|xfail\w*)$")
# A remedy of non-determinism named instead of the flake: "Set seeds for e2e tests".
DETERMINISM_RE = re.compile(r"^(?:seeds?|seeded|seeding|determinis\w*|deterministic\w*)$")
# Tests and builds, not CI in general: a bot's workflow job failing is not a red test.
TEST_NOUN_RE = re.compile(
    r"^(?:tests?|testing|test_[\w.]+|\w+_test(?:\.py)?|unittests?|ut|builds?|nightly|nightlies|"
    r"hourly|lm[-_]?eval\w*|gsm8k|mmlu|suites?|buildkite|e2e|smoke|regressiontest|testcases?|"
    r"pytest)$"
)
# Not "pipeline", "runner", "gate", "shard": in vLLM/SGLang those are pipeline
# parallelism, the model runner, MoE gates and weight shards far more often than CI.
# Nor "eval": in RL trainers it is a product feature ("fix eval with the async engine").
CI_NOUN_RE = re.compile(
    r"^(?:ci|cicd|ci/cd|tests?|testing|test_[\w.]+|\w+_test(?:\.py)?|unittests?|ut|jobs?|"
    r"builds?|nightly|"
    r"nightlies|hourly|workflows?|lm[-_]?eval\w*|gsm8k|mmlu|trunk|suites?|buildkite|e2e|"
    r"smoke|precommit|lint|linter|regressiontest|testcases?|pytest)$"
)
# Retuning a value that proved wrong ("Increase the eval timeout", "relax the tolerance").
ADJUST_VERB_RE = re.compile(
    r"^(?:increas\w*|rais\w*|bump\w*|lower\w*|reduc\w*|decreas\w*|relax\w*|loosen\w*|"
    r"tun(?:e|es|ed|ing)|retun\w*|adjust\w*|extend\w*|doubl\w*)$"
)
# Imposing a limit ("Limit `MAX_JOBS` in the install", "cap concurrency"): a preventive
# setting, a fix only where the text names what failed without it.
LIMIT_VERB_RE = re.compile(r"^(?:limit\w*|cap|caps|capped|capping)$")
RETUNE_VERB_RE = re.compile(f"{ADJUST_VERB_RE.pattern}|{LIMIT_VERB_RE.pattern}")
# A time limit being added or set (see `_PHRASES`): imposed, like a limit verb's object.
IMPOSED_LIMIT_RE = re.compile(r"^timelimit$")
KNOB_RE = re.compile(
    r"^(?:timeouts?|time[-_]?limit|num[-_]minutes|minutes|memory|mem|mem[-_]fraction\w*|"
    r"gpu[-_]memory\w*|thresholds?|tolerances?|atol|rtol|bounds?|batch[-_]?size|max[-_]\w+|"
    r"concurrency|parallelism|retries|reruns|wait)$"
)
# The description's vocabulary is narrower than a title's: bodies "restore" and
# "handle" product behaviour, and their "fix" must point at CI ("fixes the nightly").


def _one_of(*words: str) -> re.Pattern[str]:
    return re.compile("^(?:" + "|".join(words) + ")$")


BODY_FIX_RE = _one_of(r"fix(?:es|ed|ing)?", r"hotfix\w*", r"resolv\w*", r"mitigat\w*",
                      r"workaround\w*", r"unbreak\w*", r"deflak\w*", r"stabili[sz]\w*",
                      r"unblock\w*")
CI_PLACE_RE = _one_of("ci", "nightly", "trunk", "buildkite", "jobs?", "workflows?")
CI_FAILURE_RE = _one_of(r"(?:[\w.-]+[_-])?fail(?:s|ed|ing|ure|ures)?", r"flak\w*", "broken", "red",
                        r"intermittent\w*", r"sporadic\w*", "oom", r"hang(?:s|ing)?", "timeout")
# In a body only "this broke CI" counts: "CI failures are unrelated" is common in feature PRs.
BODY_BROKE_RE = re.compile(
    r"\b(?:broke|breaks|breaking)\s+(?:the\s+)?(?:ci|trunk|main|nightly|build)\b", re.I
)
# The main verb of routine CI maintenance and of features: new coverage, moves, bumps.
ROUTINE_VERB_RE = re.compile(
    r"^(?:add|adds|added|adding|introduc\w*|support\w*|implement\w*|new|extend\w*|create\w*|"
    r"expand\w*|cover\w*|bump\w*|updat\w*|upgrad\w*|pin|pins|pinned|unpin\w*|document\w*|"
    r"docs?|log|logs|logging|print\w*|debug\w*|refactor\w*|mov(?:e|es|ed|ing)|renam\w*|"
    r"migrat\w*|port|ports|ported|clean\w*|simplif\w*|speed\w*|optimi[sz]\w*|us(?:e|es|ed|ing)|"
    r"swap\w*|switch\w*|replac\w*|enabl\w*|run|runs|change\w*|modif\w*|align\w*|split\w*|"
    r"allow\w*)$"
)


def words(text: str) -> list[str]:
    lowered = text.lower()
    for pattern, replacement in _PHRASES:
        lowered = pattern.sub(replacement, lowered)
    return [w.strip("./-+") for w in _WORD_RE.findall(lowered)]


def clauses(text: str) -> list[list[str]]:
    return [found for part in CLAUSE_RE.split(text) if (found := words(part))]


def any_word(found: Sequence[str], *patterns: re.Pattern[str]) -> bool:
    return any(p.match(w) for w in found for p in patterns)


def near(found: Sequence[str], left: re.Pattern[str], right: re.Pattern[str]) -> bool:
    """Some word matching `left` within WINDOW words of one matching `right`."""
    last_left = last_right = -10 * WINDOW
    for i, word in enumerate(found):
        if left.match(word):
            if i - last_right <= WINDOW:
                return True
            last_left = i
        if right.match(word):
            if i - last_left <= WINDOW:
                return True
            last_right = i
    return False


def near_in(parts: Sequence[Sequence[str]], left: re.Pattern[str],
            right: re.Pattern[str]) -> bool:
    return any(near(part, left, right) for part in parts)


# New coverage: "add ep CI", "add tests for vllm" (a CI noun right after the verb).
_COVERAGE_VERB_RE = re.compile(r"^(?:add\w*|introduc\w*|enabl\w*|extend\w*|expand\w*|new)$")


def adds_coverage(found: Sequence[str]) -> bool:
    return bool(found) and bool(_COVERAGE_VERB_RE.match(found[0])) and any(
        CI_NOUN_RE.match(w) for w in found[1:3])
