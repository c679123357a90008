"""When to try a GitHub call again, and how long to wait first. Pure: no clock, no sleep.

Follows GitHub's documented advice: `Retry-After` wins; an exhausted primary limit
waits for `x-ratelimit-reset`; a secondary limit waits at least a minute; 5xx and
timeouts back off exponentially with jitter; anything else is final.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_SECONDARY_HINTS = ("secondary rate limit", "abuse detection", "rate limit exceeded")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    backoff_base: float = 1.0  # seconds before the second attempt, doubled per attempt
    backoff_cap: float = 30.0
    secondary_wait: float = 60.0  # GitHub: wait at least a minute without Retry-After
    # A single required wait longer than this is handed back to the caller (the queue
    # reschedules the delivery) instead of holding a worker.
    max_wait: float = 120.0


@dataclass(frozen=True)
class Decision:
    wait: float
    rate_limited: bool  # the wait came from GitHub (limits), not from our backoff


def backoff(policy: RetryPolicy, attempt: int, rand: Callable[[], float]) -> float:
    """Exponential backoff with "equal jitter": half fixed, half random."""
    delay = min(policy.backoff_cap, policy.backoff_base * 2.0 ** max(attempt - 1, 0))
    return delay / 2 + rand() * delay / 2


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _message(body: Any) -> str:
    if isinstance(body, Mapping):
        message = body.get("message")
        return message if isinstance(message, str) else ""
    if isinstance(body, bytes):
        return body[:500].decode("utf-8", "replace")
    return body[:500] if isinstance(body, str) else ""


def _is_secondary(status: int, body: Any) -> bool:
    if status == 429:
        return True
    message = _message(body).lower()
    return any(hint in message for hint in _SECONDARY_HINTS)


def decide(
    policy: RetryPolicy,
    attempt: int,
    status: int | None,
    headers: Mapping[str, str],
    body: Any,
    now: float,
    rand: Callable[[], float],
) -> Decision | None:
    """The wait before another attempt, or None when this answer is final.

    `status` None means no answer at all (timeout, connection reset). `headers` have
    lower-case names; `now` is epoch seconds (for `x-ratelimit-reset`).
    """
    if status is None or status in {500, 502, 503, 504}:
        return Decision(backoff(policy, attempt, rand), rate_limited=False)
    if status not in {403, 429}:
        return None
    retry_after = _number(headers.get("retry-after"))
    if retry_after is not None:
        return Decision(max(retry_after, 0.0), rate_limited=True)
    if headers.get("x-ratelimit-remaining") == "0":
        reset = _number(headers.get("x-ratelimit-reset"))
        # +1 s: it is not known when within that second the window resets.
        wait = max((reset or now) - now, 0.0) + 1.0
        return Decision(wait, rate_limited=True)
    if _is_secondary(status, body):
        return Decision(max(policy.secondary_wait, backoff(policy, attempt, rand)), True)
    return None  # e.g. "Resource not accessible by integration": retrying cannot help
