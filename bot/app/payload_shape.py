"""What a payload must carry for its event's handler to run at all.

A signed payload that lacks it (a `pull_request` event without `pull_request`, say)
can never be handled, so the queue dead-letters it at once with this reason instead
of retrying a KeyError until the attempts run out.
"""

from __future__ import annotations

from typing import Any

from bot.app.payload_types import type_problem
from bot.store import Delivery

# The object each per-PR handler reads (bot/app/routes.py).
REQUIRED = {"pull_request": "pull_request", "check_run": "check_run",
            "check_suite": "check_suite", "issue_comment": "issue"}


def shape_problem(event: str, payload: dict[str, Any]) -> str | None:
    """Why `payload` is malformed for `event`, or None when its handler can read it."""
    key = REQUIRED.get(event)
    if key is None:
        return None
    member = payload.get(key)
    if not isinstance(member, dict):
        return f"malformed {event} payload: no `{key}` object"
    repository = payload.get("repository")
    if not isinstance(repository, dict) or not isinstance(repository.get("full_name"), str):
        return f"malformed {event} payload: no `repository.full_name`"
    number = member.get("number")
    if key in ("pull_request", "issue") and (
            not isinstance(number, int) or isinstance(number, bool) or number < 1):
        # GitHub numbers start at 1: PR -1 would only earn 404s on every call.
        return f"malformed {event} payload: `{key}.number` is not a positive integer"
    return None


def _problem(event: str, payload: dict[str, Any]) -> str | None:
    return shape_problem(event, payload) or type_problem(event, payload)


def parsed_payload(d: Delivery) -> tuple[object, str | None]:
    """The payload, or None and why it cannot be handled (no retry would change it)."""
    try:
        payload = d.json()
    except RecursionError:
        return None, "the payload is not a JSON object: nested too deeply to parse"
    except ValueError as exc:  # UnicodeDecodeError included
        return None, f"the payload is not a JSON object: {type(exc).__name__}: {exc}"[:300]
    if not isinstance(payload, dict):
        return None, f"the payload is not a JSON object: a JSON {type(payload).__name__}"
    problem = _problem(d.event, payload)
    return (None, problem) if problem is not None else (payload, None)
