"""The few fields of a webhook payload that logs, debouncing and metrics need.

Pure and defensive: payloads are verified but their shape still varies by event, so
every lookup tolerates a missing or oddly typed member. `scan_prefix` and
`scan_pull_request` find the same fields in the raw bytes without a full parse.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True)
class DeliveryFields:
    repo: str | None = None
    number: int | None = None
    head_sha: str | None = None

    def log_fields(self) -> dict[str, Any]:
        return {"repo": self.repo, "pr": self.number, "head_sha": self.head_sha}


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def delivery_fields(payload: Any) -> DeliveryFields:
    """Repository, PR/issue number and head SHA, where the payload carries them."""
    number = _int(_get(payload, "number"))
    if number is None:
        number = _int(_get(payload, "pull_request", "number")) or _int(
            _get(payload, "issue", "number")
        )
    if number is None:
        pulls = _get(payload, "check_run", "pull_requests") or _get(
            payload, "check_suite", "pull_requests"
        )
        if isinstance(pulls, list) and pulls:
            number = _int(_get(pulls[0], "number"))
    head_sha = (
        _str(_get(payload, "pull_request", "head", "sha"))
        or _str(_get(payload, "check_run", "head_sha"))
        or _str(_get(payload, "check_suite", "head_sha"))
        or _str(_get(payload, "workflow_job", "head_sha"))
    )
    return DeliveryFields(_str(_get(payload, "repository", "full_name")), number, head_sha)


# --- the intake fast path ------------------------------------------------------------------
# Intake needs `action` (every event) and, for pull_request, the repository and number
# (the debounce key) and head SHA (the log line). Parsing a 28 kB payload costs ~20 µs;
# these anchored scans of the raw bytes cost a third of that. They answer only where
# the bytes leave no doubt about the JSON structure, and None otherwise, so the caller
# parses; the full parse happens later, in the worker, which dead-letters a payload
# that is not valid JSON. GitHub serialises objects without duplicate keys, which these
# scans (like every JSON parser here, which keeps the last duplicate) rely on.

_WS = rb"[ \t\r\n]*"
_STRING = rb'"(?:[^"\\]|\\.)*"'
# Anchored at the first byte, so "action" is the top-level object's first key, and
# "number" (pull_request events) its second.
_PREFIX = re.compile(
    rb"\A" + _WS + rb"\{" + _WS + rb'"action"' + _WS + rb":" + _WS
    + rb'"([A-Za-z0-9_]{1,64})"' + _WS + rb"(?:\}|,(?:" + _WS + rb'"number"' + _WS + rb":"
    + _WS + rb"(-?(?:0|[1-9][0-9]{0,18}))" + _WS + rb"[,}])?)"
)
# pull_request.head as GitHub lays it out: label, ref, sha. Only used for logging.
_HEAD = re.compile(
    rb'"head"' + _WS + rb":" + _WS + rb"\{" + _WS + rb'"label"' + _WS + rb":" + _WS + _STRING
    + _WS + rb"," + _WS + rb'"ref"' + _WS + rb":" + _WS + _STRING + _WS + rb"," + _WS
    + rb'"sha"' + _WS + rb":" + _WS + rb'"([0-9a-f]{40}|[0-9a-f]{64})"' + _WS + rb"[,}]",
    re.DOTALL,
)
_REPOSITORY_KEY = b'"repository"'


@dataclass(frozen=True)
class ScannedPrefix:
    action: str
    number: int | None  # the top-level "number" when it is the second key


def scan_prefix(body: bytes) -> ScannedPrefix | None:
    """`action` when it is the first key of the top-level object (GitHub puts it there)."""
    match = _PREFIX.match(body)
    if match is None:
        return None
    number = match.group(2)
    return ScannedPrefix(match.group(1).decode(), None if number is None else int(number))


def scan_pull_request(body: bytes, prefix: ScannedPrefix, *,
                      head: bool = True) -> DeliveryFields | None:
    """Repository, number and head SHA of a pull_request payload, or None (parse it).
    `head=False` leaves the head SHA out (None): intake only needs the debounce key."""
    if prefix.number is None:
        return None
    repo = _top_level_repository(body)
    head_sha = _head_sha(body) if head else None
    if repo is None or (head and head_sha is None):
        return None
    return DeliveryFields(repo, prefix.number, head_sha)


def _top_level_repository(body: bytes) -> str | None:
    # GitHub puts `repository` after the big `pull_request` object, near the end. If the
    # last "repository" key is a top-level one, `{` + the bytes from it on is a complete
    # object; at any deeper level they would close one object too many and not parse.
    at = body.rfind(_REPOSITORY_KEY)
    if at <= 0 or _escaped(body, at):
        return None
    try:
        tail = orjson.loads(b"{" + body[at:])
    except orjson.JSONDecodeError:
        return None
    return _str(_get(tail, "repository", "full_name"))


def _head_sha(body: bytes) -> str | None:
    start = 0
    while (match := _HEAD.search(body, start)) is not None:
        if not _escaped(body, match.start()):
            return match.group(1).decode()
        start = match.start() + 1
    return None


def _escaped(body: bytes, at: int) -> bool:
    """Whether the quote at `at` is preceded by an odd run of backslashes (inside a
    string); an unescaped quote in valid JSON always delimits a string token."""
    run = 0
    while at - run > 0 and body[at - run - 1] == 0x5C:
        run += 1
    return run % 2 == 1


def push_group_key(payload: bytes) -> str | None:
    """The debounce key ("owner/repo#7") of a `pull_request.synchronize` payload, or
    None when it names no repository and number. Read by the inbox's promoter
    (bot/store/inbox.py), off the request path: the anchored scans first, the full
    parse where they cannot answer. Only keys a text column can hold are returned."""
    prefix = scan_prefix(payload)
    fields = scan_pull_request(payload, prefix, head=False) if prefix is not None else None
    if fields is None:
        try:
            parsed: Any = orjson.loads(payload)
        except orjson.JSONDecodeError:
            try:
                parsed = json.loads(payload)
            except (ValueError, RecursionError):
                return None
        except RecursionError:
            return None
        fields = delivery_fields(parsed)
    if not fields.repo or not fields.number:
        return None
    key = f"{fields.repo}#{fields.number}"
    try:  # a lone surrogate ("\ud800") parses, but no store can hold it as text
        key.encode()
    except UnicodeEncodeError:
        return None
    return key
