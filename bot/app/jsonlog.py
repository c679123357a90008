"""Structured logs: one JSON object per line, with the delivery's context attached.

    with log_context(delivery_id=d.id, event=d.event, repo="o/r", pr=7, head_sha=sha):
        log.info("review published")     # carries all five fields

Fields come from `log_context` (a contextvar, so each asyncio task has its own) and
from `extra={...}`. As a last line of defence the formatter redacts the configured
secrets and anything shaped like a GitHub token, a bearer token or a PEM key, so a
careless `log.info("%s", headers)` cannot leak them.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

_context: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "ci_stability_log_context", default=None
)
_STANDARD_ATTRS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
_PEM = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.DOTALL
)
_GITHUB_TOKEN = re.compile(r"\bgh[opsur]_[A-Za-z0-9_]{16,}|\bgithub_pat_[A-Za-z0-9_]{20,}")
_AUTH_VALUE = re.compile(r"(?i:\b(?:bearer|token)\s+)[A-Za-z0-9_.\-=]{16,}")
REDACTED = "[REDACTED]"


@contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Attach `fields` to every log record emitted inside the block (nests)."""
    merged = {**(_context.get() or {}), **{k: v for k, v in fields.items() if v is not None}}
    token = _context.set(merged)
    try:
        yield
    finally:
        _context.reset(token)


def bind(**fields: Any) -> None:
    """Add fields to the current context for the rest of this task (e.g. the head SHA
    once the handler has fetched it)."""
    _context.set({**(_context.get() or {}), **fields})


class JsonFormatter(logging.Formatter):
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        # Longest first, so a secret containing another is redacted whole.
        self._secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(_context.get() or {})
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return self.redact(json.dumps(entry, default=str, ensure_ascii=False))

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
            escaped = json.dumps(secret)[1:-1]  # as it appears inside a JSON string
            if escaped != secret and escaped in text:
                text = text.replace(escaped, REDACTED)
        # Cheap substring tests first: this runs for every log line.
        if "PRIVATE KEY" in text:
            text = _PEM.sub(REDACTED, text)
        if "gh" in text:
            text = _GITHUB_TOKEN.sub(REDACTED, text)
        lowered = text.lower()
        if "bearer" in lowered or "token" in lowered:
            text = _AUTH_VALUE.sub(REDACTED, text)
        return text


def configure_logging(
    level: str | int = "INFO", stream: TextIO | None = None, secrets: Iterable[str] = ()
) -> None:
    """Send every logger's records to `stream` (stderr) as JSON lines."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # aiohttp's access log repeats what the webhook log line says, without context.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
