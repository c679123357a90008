"""The few fields of a webhook payload that logs, debouncing and metrics need.

Pure and defensive: payloads are verified but their shape still varies by event, so
every lookup tolerates a missing or oddly typed member.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
