"""Exceptions a delivery handler raises to steer the worker's retry policy.

Any other exception is treated as retryable with the worker's own backoff: a bug
that fails every time still ends in the dead-letter state after `max_attempts`.
"""

from __future__ import annotations


class RetryableError(Exception):
    """A transient failure (5xx, timeout, rate limit): try the delivery again.

    `retry_after` (seconds) overrides the worker's backoff, e.g. from GitHub's
    `Retry-After` or `x-ratelimit-reset` headers.
    """

    def __init__(self, message: str = "", retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentError(Exception):
    """A failure that another attempt cannot fix: dead-letter the delivery now."""


class LeaseLost(Exception):
    """This replica no longer holds the delivery it works on (its lease ran out before
    it was renewed: the process was stalled, or another replica took the delivery over).
    Nothing more may be published for it; the worker hands it on, counted as an attempt."""
