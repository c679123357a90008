"""The JSON types of the payload fields each handler reads, checked before it runs.

A signed payload can still carry any JSON at any place (a fuzz of the vendored real
payloads, bench/fuzz_payloads.py, found handlers calling `.get` on an int `sender` and
binding a dict `workflow_run.path` into SQL). GitHub's schema gives each field one
type; a payload that breaks it can never be handled, so the queue dead-letters it
with the path and the type found instead of retrying a traceback.
"""

from __future__ import annotations

import re
from typing import Any

# (path, allowed JSON types); "*" steps into every element of a list. A field absent
# or null passes: the handlers treat missing optional fields themselves.
_OBJ, _LIST, _STR, _INT = (dict,), (list,), (str,), (int,)
_COMMON: tuple[tuple[tuple[str, ...], tuple[type, ...]], ...] = (
    (("action",), _STR),
    (("installation",), _OBJ), (("installation", "id"), _INT),
    (("sender",), _OBJ), (("sender", "login"), _STR), (("sender", "type"), _STR),
    (("repository",), _OBJ), (("repository", "full_name"), _STR),
)
_PULLS = (("pull_requests",), _LIST), (("pull_requests", "*"), _OBJ), \
    (("pull_requests", "*", "number"), _INT)
FIELDS: dict[str, tuple[tuple[tuple[str, ...], tuple[type, ...]], ...]] = {
    "pull_request": ((("changes",), _OBJ),),
    "check_run": (*((("check_run", *p), t) for p, t in _PULLS),
                  (("requested_action",), _OBJ), (("requested_action", "identifier"), _STR)),
    "check_suite": tuple((("check_suite", *p), t) for p, t in _PULLS),
    "issue_comment": ((("comment",), _OBJ), (("comment", "id"), _INT), (("comment", "body"), _STR),
                      (("comment", "user"), _OBJ), (("comment", "user", "login"), _STR),
                      (("comment", "user", "type"), _STR)),
    "installation": ((("installation", "account"), _OBJ),
                     (("installation", "account", "login"), _STR)),
    "workflow_run": (
        (("workflow_run",), _OBJ),
        *((("workflow_run", key), _STR) for key in (
            "name", "path", "head_branch", "head_sha", "html_url", "event", "status",
            "conclusion", "run_started_at", "created_at", "updated_at")),
        (("workflow_run", "id"), _INT),
        *((("workflow_run", *p), t) for p, t in _PULLS)),
    "workflow_job": (
        (("workflow_job",), _OBJ),
        *((("workflow_job", key), _STR) for key in (
            "name", "workflow_name", "head_branch", "head_sha", "html_url", "status",
            "conclusion")),
        *((("workflow_job", key), _INT) for key in ("id", "run_id", "run_attempt"))),
}


# GitHub's limits, loosely (managed-user logins carry `_`): ≤ 100 characters a side.
# Anything else names no repository; put in a URL it only earns an error from GitHub.
_FULL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9._-]{1,100}")


# Read with `[...]`, so present whenever their parent is: (event, path) as in FIELDS.
REQUIRED: dict[str, tuple[tuple[str, ...], ...]] = {
    "check_run": (("check_run", "pull_requests", "*", "number"),),
    "check_suite": (("check_suite", "pull_requests", "*", "number"),),
    "issue_comment": (("comment",), ("comment", "id")),
}


def _missing(node: Any, path: tuple[str, ...], where: str = "") -> str | None:
    """The dotted path of the first place `path` is absent under an existing parent."""
    if not path:
        return None
    head, rest = path[0], path[1:]
    children: list[tuple[str | int, Any]]
    if head == "*":
        children = list(enumerate(node)) if isinstance(node, list) else []
    elif isinstance(node, dict) and node.get(head) is not None:
        children = [(head, node[head])]
    else:
        return f"{where}{head}" if isinstance(node, dict) else None
    for key, child in children:
        found = _missing(child, rest, f"{where}{key}.")
        if found is not None:
            return found
    return None


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


def _found(node: Any, path: tuple[str, ...]) -> list[tuple[str, Any]]:
    """(dotted path, value) of every value at `path` under `node` (none when absent)."""
    if not path:
        return [("", node)]
    head, rest = path[0], path[1:]
    items: list[tuple[str | int, Any]]
    if head == "*":
        items = list(enumerate(node)) if isinstance(node, list) else []
    else:
        items = [(head, node[head])] if isinstance(node, dict) and head in node else []
    return [(f"{key}.{sub}".rstrip("."), value) for key, child in items
            for sub, value in _found(child, rest)]


def type_problem(event: str, payload: dict[str, Any]) -> str | None:
    """Why a field a handler of `event` reads has the wrong JSON type, or None."""
    if event not in FIELDS:  # not a GitHub event we handle (e.g. a Buildkite one)
        return None
    for path, allowed in (*_COMMON, *FIELDS[event]):
        for where, value in _found(payload, path):
            # bool is an int subclass in Python, but never an id or a number in JSON.
            if value is None or (isinstance(value, allowed) and not isinstance(value, bool)):
                continue
            names = " or ".join(_json_type(t()) for t in allowed)
            return f"malformed {event} payload: `{where}` is {_json_type(value)}, not {names}"
    for path in REQUIRED.get(event, ()):
        absent = _missing(payload, path)
        if absent is not None:
            return f"malformed {event} payload: no `{absent}`"
    full_name = (payload.get("repository") or {}).get("full_name")
    if isinstance(full_name, str) and not _FULL_NAME.fullmatch(full_name):
        return f"malformed {event} payload: `repository.full_name` is not owner/name"
    return None
