"""Issue and PR references in a PR description: tracking issues, links, dedup verdicts.

Shared by `dedup-note` (did the author look for duplicate work?) and `silenced-test`
(is the silenced test tracked by an issue?).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rules.analysis.prtext.markdown import clean, quote, sentences

_MAX_REFS = 500  # references examined for a verdict; real descriptions cite a handful

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
    r"added|changed|triggered|due to)\s+(?:in|by|with|from|since|to)?\s*(?:pr\s*)?$"
    # "After moe refactor in <PR>", "since the API change in #12": the change that broke it.
    r"|\b(?:after|since|due to)\s+(?:[\w.-]+\s+){1,3}?(?:in|by|from|of)\s+(?:pr\s*)?$",
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
    r"\bstale\b|\babandoned\b|\bno overlap\b|\bnot a dup\w*|\bduplicat\w*|"
    r"\b(?:tr(?:y|ies|ied)|attempt(?:s|ed)?)\s+to\s+(?:fix|address|solve|resolve)\b|"
    r"\bfollow[- ]?up\s+(?:to|of|on|for)\b|\b(?:previous|earlier|first|prior)\s+"
    r"(?:fix|attempt|part|pr)\b"
    # The PR is one step of a series the description names: "part 2 of #4479".
    r"|\bpart\s+\d+\s+of\b|\bcontinu(?:es|ation of)\b|\bsame as\b|\bsplit (?:out )?(?:of|from)\b|"
    r"\brelands?\b|\bcounterpart\b|\bcompanion\b|\b(?:second|next|last|final)\s+(?:part|half|step)\b",
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


# A revert, as GitHub's revert button and `git revert` write it: the title quotes the
# reverted change (`Revert "Add ci test for X" (#12)`), the body names it.
_REVERT_TITLE_RE = re.compile(
    r"^\s*(?:\[[^\]\n]{1,40}\]\s*)*revert\s*(?::\s*)?(?:[\"“'`]|(?:pr\s*)?(?:[\w.-]+/[\w.-]+)?#\d)",
    re.I,
)
_REVERTS_RE = re.compile(
    r"\breverts\s+(?:[\w.-]+/[\w.-]+)?#\d+\b|\breverts\s+https?://github\.com/[\w.-]+/[\w.-]+/"
    r"pull/\d+|\bthis reverts commit\s+[0-9a-f]{7,40}\b",
    re.I,
)


def reverted_change(title: str, body: str) -> str | None:
    """What a revert names as the change it undoes ("Reverts org/repo#967", "This reverts
    commit 1a2b3c4"), when the title says it is a revert; None for anything else."""
    if _REVERT_TITLE_RE.match(title[:1000]) is None:
        return None
    match = _REVERTS_RE.search(clean(body)[:20_000])
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
            return quote(sentence.strip(" \t-*>"))
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
            return quote(line)
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
    linked = []
    for sentence in sentences(text):
        link = issue_link(sentence)
        if link:
            linked.append(
                (sentence.lower(), link, _SILENCE_WORD_RE.search(sentence) is not None)
            )
    return DescriptionLinks(tracking_issue(text), tuple(linked))


_SILENCE_WORD_RE = re.compile(
    r"\b(?:skip\w*|disabl\w*|xfail\w*|flak\w*|re-?enabl\w*|track\w*|quarantin\w*|"
    r"soft[_ ]fail\w*|retr(?:y|ies)|reruns?|follow[- ]?up|todo)\b",
    re.I,
)
