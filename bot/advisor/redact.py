"""Secrets never reach the model: tokens and keys in logs, diffs and PR text are replaced.

CI logs echo environments and command lines, so a log line may carry a GitHub token,
a cloud key or a `Bearer …` header. Every text bound for the prompt passes through
`redact` first; the shapes below are the documented formats of the common issuers,
plus `NAME=value` assignments whose name says it is a secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

REDACTED = "[REDACTED]"

_TOKEN_SHAPES = (
    r"gh[pousr]_[A-Za-z0-9]{20,255}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{22,255}",
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}",  # OpenAI / Anthropic-style keys
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
    r"(?:AKIA|ASIA)[A-Z0-9]{16}",  # AWS access key ids
    r"AIza[0-9A-Za-z_\-]{35}",  # Google API keys
    r"bkua_[A-Za-z0-9]{30,}",  # Buildkite API tokens
    r"glpat-[A-Za-z0-9_\-]{20,}",  # GitLab
    r"npm_[A-Za-z0-9]{36}",
    r"eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # JWTs
)
_TOKENS = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(_TOKEN_SHAPES) + r")")
_BEARER = re.compile(r"(?i)\b(bearer|token|basic)\s+[A-Za-z0-9._~+/=\-]{16,}")
# KEY=value, key: value, "key": "value" where the name says secret.
_ASSIGNMENT = re.compile(
    r"(?i)\b([A-Za-z0-9_.\-]*(?:secret|token|passw(?:or)?d|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|credential|auth)[A-Za-z0-9_.\-]*)(\"?\s*[:=]\s*\"?)([^\s\"',;]{6,})"
)
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@]+:[^/\s@]+@")
_PEM = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S
)


def redact(text: str) -> str:
    """`text` with every recognisable secret replaced by `[REDACTED]`."""
    if not text:
        return text
    text = _PEM.sub(REDACTED, text)
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _TOKENS.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _ASSIGNMENT.sub(
        lambda m: m.group(0) if m.group(3) == REDACTED
        else f"{m.group(1)}{m.group(2)}{REDACTED}", text)


_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")


def redact_lines(lines: Iterable[str]) -> Iterator[str]:
    """`redact` line by line, and every line of a private key block between its markers."""
    inside = False
    for line in lines:
        if inside:
            inside = not _PEM_END.search(line)
            yield REDACTED
            continue
        if _PEM_BEGIN.search(line) and not _PEM_END.search(line):
            inside = True
            yield REDACTED
            continue
        yield redact(line)
