"""Evidence of the failing run in a PR description: a run URL, a run id, a log excerpt.

Also stress statistics ("passed 50/50 runs"): what shows a flaky fix holds.
"""

from __future__ import annotations

import re

from rules.analysis.prtext.markdown import clean, quote, split_markdown

_INLINE_CODE_RE = re.compile(r"`([^`\n]{1,2000})`")
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
    r"FAILED [\w./-]+\.py::\w+|##\[error\]|"
    # Root-cause lines quoted in prose: resolver, import, NCCL and CUDA failures, and a
    # named exception with its message ("ModuleNotFoundError: No module named 'x'").
    r"No matching distribution found for \S+|No module named '?[\w.]+|"
    r"Watchdog caught collective operation timeout|ProcessGroupNCCL\.cpp:\d+|"
    r"NCCL (?:error|WARN|timeout)\b|CUDA error: [a-z]|illegal memory access was encountered|"
    r"\b[A-Z][a-z]\w*(?:Error|Exception): [A-Za-z'\"`<]",
)
_STRESS_RE = re.compile(
    r"\b(?:passed|passes|green|succeeded|ran)\s+\d+\s*/\s*\d+\b|\b\d+\s*/\s*\d+\s+"
    r"(?:runs?|passe[sd]|green|iterations?|times|attempts?)\b|\b\d+\s+(?:consecutive\s+)?"
    r"(?:runs|iterations|repeats)\b|--count[= ]\d+|--flake-finder|pytest-repeat",
    re.I,
)


# A screenshot attached to the description (GitHub's attachment hosts): in a CI fix it
# shows the failing run or its history, which is the evidence asked for.
_SCREENSHOT_RE = re.compile(
    r"https://(?:github\.com/user-attachments/assets|user-images\.githubusercontent\.com"
    r"|private-user-images\.githubusercontent\.com)/[\w./-]{8,200}")


def failure_evidence(body: str) -> str | None:
    """What in the description shows the failing run: a run URL, a run id, a log excerpt
    or an attached screenshot."""
    text = clean(body)
    match = _RUN_URL_RE.search(text)
    if match:
        return match.group(0)
    match = _SCREENSHOT_RE.search(body[:200_000])
    if match:
        return f"screenshot {match.group(0)}"
    prose, blocks = split_markdown(text)
    match = _RUN_ID_RE.search(prose)
    if match:
        return match.group(0)
    for block in blocks:
        match = _ERROR_LINE_RE.search(block)
        if match:
            return quote(block[match.start(): match.start() + 90].splitlines()[0])
    match = _VERBATIM_RE.search(prose)
    if match:
        return quote(prose[match.start(): match.start() + 90].splitlines()[0])
    for inline in _INLINE_CODE_RE.finditer(prose):
        match = _ERROR_LINE_RE.search(inline.group(1))
        if match and ":" in inline.group(1):
            return quote(inline.group(1))
    return None


def stress_statistics(body: str) -> str | None:
    match = _STRESS_RE.search(clean(body))
    return match.group(0) if match else None
