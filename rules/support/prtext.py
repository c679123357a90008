"""Reading a PR description: is it a CI fix, does it show the failure, did it check for duplicates.

Shared by `dedup-note` and `failing-run-link` (and the issue-link helpers by
`silenced-test`). Everything here is linear in the text: PR bodies are hostile input
(pasted 10 MB logs), so the text is capped and no pattern nests quantifiers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

MAX_TEXT = 300_000
_MAX_REFS = 500  # references examined for a verdict; real descriptions cite a handful
_WINDOW = 8  # words between a verb and its object ("fix the GLM-5.2 PCP eval")

# --- markdown structure -------------------------------------------------------------

_HTML_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_FENCE_RE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")
_QUOTE_RE = re.compile(r"^[ \t]{0,3}>")
_INLINE_CODE_RE = re.compile(r"`([^`\n]{1,2000})`")


def clean(text: str) -> str:
    """The text that a reader sees: capped, without HTML comments (PR templates)."""
    return _HTML_COMMENT_RE.sub("", text[:MAX_TEXT])


def split_markdown(text: str) -> tuple[str, list[str]]:
    """(prose, blocks): fenced code and `>` quotes are blocks, the rest is prose."""
    prose: list[str] = []
    blocks: list[str] = []
    current: list[str] | None = None
    fence = ""
    quote: list[str] = []
    for line in text.splitlines():
        if current is not None:
            if line.lstrip().startswith(fence):
                blocks.append("\n".join(current))
                current = None
            else:
                current.append(line)
            continue
        match = _FENCE_RE.match(line)
        if match:
            fence = match.group(1)[:3]
            current = []
            continue
        if _QUOTE_RE.match(line):
            quote.append(line.lstrip()[1:])
            continue
        if quote:
            blocks.append("\n".join(quote))
            quote = []
        prose.append(line)
    if current is not None:  # an unclosed fence still holds pasted output
        blocks.append("\n".join(current))
    if quote:
        blocks.append("\n".join(quote))
    return "\n".join(prose), blocks


# --- is this PR a CI fix? -----------------------------------------------------------

_TAGS_RE = re.compile(r"^\s*((?:\[[^\]\n]{1,40}\]\s*)+)")
_CI_TAG_RE = re.compile(r"\b(?:ci|flaky|ci[ -]?failure|ci[ -]?fix)\b", re.I)
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
    r"^(?:flak(?:y|iness|es|e)|deflak\w*|unflak\w*|stabili[sz](?:e|es|ed|ing|ation)|"
    r"unblock\w*|quarantin\w*|retun(?:e|es|ed|ing))$"
)
_FIX_RE = re.compile(
    r"^(?:fix(?:es|ed|ing)?|hotfix\w*|repair\w*|resolv\w*|mitigat\w*|workaround\w*|"
    r"avoid\w*|prevent\w*|unbreak\w*|revert\w*|skip\w*|disabl\w*|silenc\w*|xfail\w*|"
    r"deflak\w*|stabili[sz]\w*|unblock\w*)$"
)
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


def _title_is_fix(
    rest: str, words: Sequence[str], clauses: Sequence[Sequence[str]], ci_tag: bool
) -> bool:
    routine_noun = _ROUTINE_NOUN_RE.search(rest) is not None and not _has_fix_verb(words)
    strong = any(_STRONG_RE.match(w) for w in words)
    if strong and not routine_noun:
        return True
    if _DOCS_RE.search(rest) and not strong:  # "Fix typo in CI docs"
        return False
    if _near_in(clauses, _FIX_RE, _CI_NOUN_RE) or _near_in(clauses, _FIX_RE, _CI_FAILURE_RE):
        return True
    # "Increase the GLM eval timeout" retunes CI; "Increase max-model-len" changes the product.
    ci_context = ci_tag or any(_CI_NOUN_RE.match(w) for w in words)
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
    for sentence in _sentences(prose):
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
        _near_in(_clauses(sentence), _FAILURE_RE, _CI_NOUN_RE) for sentence in _sentences(prose)
    )


# A period inside "GLM-5.2" or "test_x.py" does not end a sentence.
_SENTENCE_RE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+[.!?]*")


def _sentences(text: str) -> Iterable[str]:
    for match in _SENTENCE_RE.finditer(text):
        sentence = match.group(0).strip()
        if sentence:
            yield sentence


def _quote(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


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
    if _title_is_fix(rest, words, clauses, ci_tag) or _BROKE_RE.search(rest):
        return _quote(title)
    routine = _routine(rest, words)
    if _near_in(clauses, _FAILURE_RE, _CI_NOUN_RE) and not routine:
        return _quote(title)
    prose, _ = split_markdown(clean(body))
    body_sentence = _body_fix_sentence(prose)
    if ci_tag and not routine:
        # A bare `[CI]` tag also marks refactors and moves: the text must name a failure.
        failure_word = any(_FAILURE_RE.match(w) for w in words)
        if failure_word or body_sentence or _body_failure(prose) or failure_evidence(body):
            return _quote(title)
    if body_sentence and not routine:
        return _quote(body_sentence)
    label = next((lb for lb in labels if _LABEL_RE.search(lb)), None)
    if label is not None:
        return f"label {label}"
    return None


# --- evidence of the failing run ------------------------------------------------------

_RUN_URL_RE = re.compile(
    r"https?://(?:"
    r"buildkite\.com/(?:organizations/[\w.-]+/pipelines/[\w.-]+|[\w.-]+/[\w.-]+)/builds/\d+"
    r"|github\.com/[\w.-]+/[\w.-]+/(?:actions/runs/\d+|runs/\d+)"
    r"|github\.com/[\w.-]+/[\w.-]+/(?:pull/\d+|commit/[0-9a-f]{7,40})/checks\?check_run_id=\d+"
    r"|(?:app\.)?circleci\.com/[\w./%-]{0,300}?/\d+"
    r"|[\w.-]+(?::\d+)?/(?:[\w.%-]+/){0,6}?job/[\w.%-]+/(?:job/[\w.%-]+/){0,6}\d+"
    r"|[\w.-]*gitlab[\w.-]*/[\w./-]{0,300}?/-/(?:pipelines|jobs)/\d+"
    r"|hud\.pytorch\.org/[\w./?=&%#-]+"
    r"|dev\.azure\.com/[\w./-]{0,300}?/_build/results\?buildId=\d+"
    r"|(?:app\.)?travis-ci\.(?:org|com)/[\w./-]{0,300}?/(?:builds|jobs)/\d+"
    r")",
    re.I,
)
_RUN_ID_RE = re.compile(
    r"\b(?:buildkite|bk)\s*(?:build|run|job)?\s*#?\s*\d{3,}\b"
    r"|\b(?:build|pipeline|workflow run|job)\s*#\s*\d{3,}\b"
    r"|\brun\s*#\s*\d{4,}\b"
    r"|\b(?:run|job)\s+(?:id\s*)?:?\s*\d{6,}\b"
    r"|\brun[_ ]id[=:]\s*\d{5,}\b",
    re.I,
)
# Lines that only pasted output contains. Case matters for FAILED/ERROR.
_ERROR_LINE_RE = re.compile(
    r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception):|"
    r"(?<![\w.])Error:|\bFAILED\b|\bERROR\b|(?i:cuda out of memory)|OutOfMemory|"
    r"(?i:exit(?:ed)?\s+(?:with\s+)?(?:code|status))|(?i:timed out)|\bKilled\b|"
    r"\bSIG(?:SEGV|KILL|ABRT|BUS|TERM)\b|(?i:segmentation fault)|(?i:core dumped)|"
    r"##\[error\]|^E {2,}\S|(?i:nccl error)|\b[1-9]\d* failed\b|"
    r"\bHTTP(?: Error)? [45]\d\d\b|\b(?:403 Forbidden|429 Too Many Requests)\b|"
    r"(?i:oom-killer)|\bfatal:|(?i:undefined symbol)",
    re.M,
)
# Verbatim log fragments that count even when pasted inline in prose.
_VERBATIM_RE = re.compile(
    r"Traceback \(most recent call last\)|CUDA out of memory\. Tried to allocate|"
    r"Tried to allocate \d+(?:\.\d+)? [GMK]i?B|torch\.(?:cuda\.)?OutOfMemoryError|"
    r"FAILED [\w./-]+\.py::\w+|##\[error\]",
)
_STRESS_RE = re.compile(
    r"\b(?:passed|passes|green|succeeded|ran)\s+\d+\s*/\s*\d+\b|\b\d+\s*/\s*\d+\s+"
    r"(?:runs?|passe[sd]|green|iterations?|times|attempts?)\b|\b\d+\s+(?:consecutive\s+)?"
    r"(?:runs|iterations|repeats)\b|--count[= ]\d+|--flake-finder|pytest-repeat",
    re.I,
)


def failure_evidence(body: str) -> str | None:
    """What in the description shows the failing run: a run URL, a run id, or a log excerpt."""
    text = clean(body)
    match = _RUN_URL_RE.search(text)
    if match:
        return match.group(0)
    prose, blocks = split_markdown(text)
    match = _RUN_ID_RE.search(prose)
    if match:
        return match.group(0)
    for block in blocks:
        match = _ERROR_LINE_RE.search(block)
        if match:
            return _quote(block[match.start(): match.start() + 90].splitlines()[0])
    match = _VERBATIM_RE.search(prose)
    if match:
        return match.group(0)
    for inline in _INLINE_CODE_RE.finditer(prose):
        match = _ERROR_LINE_RE.search(inline.group(1))
        if match and ":" in inline.group(1):
            return _quote(inline.group(1))
    return None


def stress_statistics(body: str) -> str | None:
    match = _STRESS_RE.search(clean(body))
    return match.group(0) if match else None


# --- issue and PR references ----------------------------------------------------------

_REF_RE = re.compile(
    r"(?<![\w&/#])(?:[\w.-]+/[\w.-]+)?#\d+\b"
    r"|https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+"
)
_ISSUE_LINK_RE = re.compile(
    r"(?<![\w&/#])(?:[\w.-]+/[\w.-]+)?#\d+\b|https?://\S{1,200}?/(?:issues|pull|merge_requests)/\d+"
    r"|https?://\S{1,200}?/browse/[A-Z][A-Z0-9]+-\d+"
)
_ISSUE_URL_RE = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/issues/\d+")
_TRACKING_RE = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|part of|tracked (?:in|by)|tracking(?: issue)?|"
    r"tracker)\b\s*:?\s*(?:issue\s*)?(?:[\w.-]+/[\w.-]+)?#\d+\b"
    r"|\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b\s*:?\s*https?://github\.com/[\w.-]+/"
    r"[\w.-]+/issues/\d+",
    re.I,
)
_RUN_REF_BEFORE_RE = re.compile(r"(?:buildkite|bk|build|run|job|pipeline)\s*$", re.I)
_CAUSAL_BEFORE_RE = re.compile(
    r"\b(?:regress\w*|introduc\w*|caus\w*|broke\w*|break\w*|since|after|land\w*|merg\w*|"
    r"added|changed|triggered|due to)\s+(?:in|by|with|from|since|to)?\s*(?:pr\s*)?$",
    re.I,
)
_CAUSAL_AFTER_RE = re.compile(
    r"^\s*(?:\([^)\n]{0,80}\)\s*)?,?\s*(?:which\s+|that\s+)?(?:introduc\w*|caus\w*|broke\b|"
    r"regress\w*|added|changed|switched|made|bumped|raised|set|landed|merged)",
    re.I,
)
_VERDICT_RE = re.compile(
    r"\bnot\s+(?:a\s+|the\s+)?(?:dup\w*|same|related|overlapping|relevant)|\bunrelated\b|"
    r"\bdifferent\b|\bdistinct\b|\bseparate\b|\bindependent\b|\borthogonal\b|\bsupersed\w*|"
    r"\breplac(?:es|ed by)\b|\bsame\s+(?:failure|issue|problem|root cause|error|bug|fix|crash|"
    r"oom)\b|\bdup(?:licate)?s?\s+of\b|\bduplicates\b|\balready\s+(?:fixed|addressed|covered|"
    r"handled|merged|closed)\b|\b(?:does not|doesn't|did not|didn't|won't|will not)\s+"
    r"(?:fix|address|cover|help|solve|resolve)\b|\boverlap\w*|\bcomplement\w*|\balternative\b|"
    r"\binstead of\b|\b(?:also|partially|partly)\s+(?:fix|address)\w*|\bbuilds on\b|"
    r"\bstale\b|\babandoned\b|\bno overlap\b|\bnot a dup\w*",
    re.I,
)


def tracking_issue(text: str) -> str | None:
    """`Closes #123`, `Fixes org/repo#1`, `tracked in #12`, or a full issue URL."""
    text = clean(text)
    match = _TRACKING_RE.search(text) or _ISSUE_URL_RE.search(text)
    return match.group(0) if match else None


def issue_link(text: str) -> str | None:
    """Any issue or PR link in a short text (a changed line, a comment)."""
    match = _ISSUE_LINK_RE.search(text[:20_000])
    return match.group(0) if match else None


_BOUNDARIES = (". ", ".\n", "? ", "! ", "\n\n", "\n- ", "\n* ", "\n+ ", "\n|")


def _sentence_around(text: str, start: int, end: int) -> str:
    """The sentence or list item holding text[start:end], across wrapped lines."""
    lo, hi = max(0, start - 400), min(len(text), end + 400)
    left = max((text.rfind(b, lo, start) + len(b) for b in _BOUNDARIES
                if text.rfind(b, lo, start) >= 0), default=lo)
    right = min((i for b in _BOUNDARIES if (i := text.find(b, end, hi)) >= 0), default=hi)
    return text[left:right]


def verdict_reference(text: str) -> str | None:
    """A reference to another PR/issue on a line that gives a verdict about it.

    "#50791 — different workspace, not a duplicate" counts; naming only the PR that
    caused the breakage ("regressed by #49294") does not.
    """
    text = clean(text)
    if not _VERDICT_RE.search(text):
        return None
    for count, match in enumerate(_REF_RE.finditer(text)):
        if count >= _MAX_REFS:
            break
        before = text[max(0, match.start() - 40): match.start()]
        after = text[match.end(): match.end() + 100]
        if _RUN_REF_BEFORE_RE.search(before):
            continue
        if _CAUSAL_BEFORE_RE.search(before) or _CAUSAL_AFTER_RE.match(after):
            continue
        sentence = _sentence_around(text, match.start(), match.end())
        if _VERDICT_RE.search(sentence):
            return _quote(sentence.strip(" \t-*>"))
    return None


_HEADING_CHARS = 300
_HEADING_LINE_RE = re.compile(r"^\s*(?:#{1,6}\s|\*\*[^*\n]{1,80}\*\*\s*:?\s*$)")


@lru_cache(maxsize=32)
def _compile(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def dedup_section(body: str, heading: str) -> str | None:
    """The first line of a non-empty section whose heading matches the configured pattern.

    The pattern is matched line by line on whitespace-collapsed, length-capped lines:
    a configured pattern such as `^\\s*(?:#+\\s*)?\\s*word` backtracks quadratically on long
    runs of whitespace, and a PR body is attacker-controlled.
    """
    pattern = _compile(heading)
    if pattern is None:
        return None
    lines = [" ".join(line.split())[:_HEADING_CHARS] for line in clean(body).splitlines()]
    for i, line in enumerate(lines):
        match = pattern.search(line) if line else None
        if match is None:
            continue
        rest = line[match.end():]
        if line.startswith(("#", "**")):
            # The rest of a heading is heading text; only what follows `**`/`:` is content.
            cut = max(rest.rfind("**"), rest.rfind(":"))
            rest = rest[cut + 1:] if cut >= 0 else ""
        content = bool(rest.strip(" :*#-—"))
        for following in lines[i + 1: i + 200]:
            if content or _HEADING_LINE_RE.match(following):
                break
            content = bool(following)
        if content:
            return _quote(line)
    return None


def dedup_evidence(body: str, heading: str) -> str | None:
    """What in the description shows that duplicate work was looked for."""
    return dedup_section(body, heading) or tracking_issue(body) or verdict_reference(body)


@dataclass(frozen=True)
class DescriptionLinks:
    """Issue links in a PR description, for rules that accept "linked in the description"."""

    tracking: str | None
    # (lower-cased sentence, the link in it, whether it talks about silencing a test)
    sentences: tuple[tuple[str, str, bool], ...]

    @staticmethod
    def of(body: str) -> DescriptionLinks:
        return _description_links(body)

    def covers(self, subject: str) -> str | None:
        """The link that tracks a silenced test or job named `subject`, if any."""
        if self.tracking:
            return self.tracking
        wanted = subject.lower() if len(subject) >= 3 else None
        for lowered, link, silencing in self.sentences:
            if silencing or (wanted and wanted in lowered):
                return link
        return None


@lru_cache(maxsize=8)
def _description_links(body: str) -> DescriptionLinks:
    text = clean(body)
    sentences = []
    for sentence in _sentences(text):
        link = issue_link(sentence)
        if link:
            sentences.append(
                (sentence.lower(), link, _SILENCE_WORD_RE.search(sentence) is not None)
            )
    return DescriptionLinks(tracking_issue(text), tuple(sentences))


_SILENCE_WORD_RE = re.compile(
    r"\b(?:skip\w*|disabl\w*|xfail\w*|flak\w*|re-?enabl\w*|track\w*|quarantin\w*|"
    r"soft[_ ]fail\w*|retr(?:y|ies)|reruns?|follow[- ]?up|todo)\b",
    re.I,
)
