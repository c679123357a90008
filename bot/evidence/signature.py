"""Normalized failure signatures: the same failure on different runs → the same string.

What varies between two occurrences of one failure is run-specific detail: timestamps,
pids, ranks, devices, sizes, durations, scores, hex addresses, request and runner ids,
temporary paths, pytest parameter ids, and log decorations (vLLM process prefixes,
glog headers, Ray's "[repeated Nx across cluster]"). The signature keeps the words and
identifiers (test names, module paths, error types) and replaces the rest by
placeholders. It stays human-readable on purpose: it is shown in reviews and is its
own grouping key (hash it if a fixed width is needed).
"""

from __future__ import annotations

import re

SIGNATURE_MAX = 300

_RAY_REPEAT = re.compile(r"\s*\[repeated \d+x across cluster\]")
# Decorations that precede the message; removed repeatedly from the start of the line.
_LEADING = re.compile(
    r"^(?:"
    r"\([\w.:-]+ pid=\d+\)\s*"  # vLLM / Ray process prefix: (EngineCore pid=2181)
    r"|(?:ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[^\]]*\]\s*"
    r"|\[rank\d+\]:\s*"  # torch distributed rank prefix
    r"|\[[IWEF]\d{3,4} [\d:.]+ [\w.]+:\d+\]\s*"  # c10 logging: [W804 15:02:21.94 File.cpp:39]
    r"|[IWEF]\d{4} [\d:.]+\s+\d+ [^\]]*\]\s*"  # glog: E0730 10:12:17.911000 80638 f.py:1133]
    r"|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d [\d:]+ \d{4}\]\s*"  # dmesg -T
    r"|\[\s*\d+\.\d+\]\s*"  # dmesg uptime
    r"|##\[error\]"
    r"|E\s{2,}"  # pytest's failure-detail gutter
    r")"
)
# pytest's summary line names the test; the failure is what follows " - ", and it is
# the same text the traceback printed (reruns print both), so only that is kept.
_PYTEST_SUMMARY = re.compile(r"^(?:FAILED|ERROR) (?:\[[\d.]+m?s\] )?\S+ - (?=\S)")
_PYTEST_PARAMS = re.compile(r"(::[\w.]+)\[[^\]]*\]")

# Order matters: specific shapes before the generic number rule eats their digits.
_SUBSTITUTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:/private)?/var/folders/\S+|/(?:tmp|dev/shm)/[^\s'\":,)]+"), "<tmp>"),
    (re.compile(r"pytest-of-[^/\s]+/pytest-\d+"), "<tmp>"),
    (
        re.compile(r"(?i)\b(request[ _-]?id)\b([:=]?\s*)[^\s,;)]+(?:;[^\s,;)]+)*"),
        r"\1\2<id>",
    ),
    (re.compile(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?(?: UTC)?"), "<ts>"),
    (re.compile(r"\b\d{1,2}:\d\d:\d\d(?:\.\d+)?\b"), "<time>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    # Hex ids (shas, container/runner ids, hash-suffixed file names): long, with a digit
    # and a letter (all-digit runs are plain numbers).
    (
        re.compile(
            r"(?<![0-9A-Za-z])(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,}"
            r"(?![0-9A-Za-z])"
        ),
        "<hex>",
    ),
    (re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|[kK]B|bytes|B)\b"), "<size>"),
    (
        re.compile(
            r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|us|µs|ns|s|secs?|seconds?|mins?|minutes?|h|hours?)\b"
        ),
        "<dur>",
    ),
    (re.compile(r"\b(rank|pid|tid|device|gpu|cuda:)(\s*)\d+", re.IGNORECASE), r"\1\2<n>"),
    # Plain numbers, but not digits glued to a name (test_c10d, sm90, cp312 stay distinct).
    (re.compile(r"(?<![A-Za-z_\d])-?\d+(?:\.\d+)*"), "<n>"),
    (re.compile(r"\s+"), " "),
)


def normalize(text: str) -> str:
    """`text` (already marker-stripped) with run-specific detail replaced by placeholders."""
    text = _RAY_REPEAT.sub("", text).strip()
    previous = None
    while previous != text:
        previous = text
        text = _LEADING.sub("", text, count=1)
    text = _PYTEST_PARAMS.sub(r"\1[…]", text)  # before the summary: ids may hold spaces
    text = _PYTEST_SUMMARY.sub("", text, count=1)
    for pattern, replacement in _SUBSTITUTIONS:
        text = pattern.sub(replacement, text)
    return text.strip()[:SIGNATURE_MAX]


def signature(category: str, text: str, key: str | None = None) -> str:
    """The grouping key of a root-cause line: category plus its normalized text.

    `key`, when the catalog pattern defines one, is the part of the line that
    identifies the failure (e.g. the run_test.py crash template without the test name).
    """
    return f"{category}: {normalize(key if key else text)}"
