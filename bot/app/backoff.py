"""Retry delays for failed deliveries (the worker's default backoff)."""

from __future__ import annotations

import random
from collections.abc import Callable

Backoff = Callable[[int], float]


def exponential_backoff(base: float = 2.0, cap: float = 600.0,
                        rng: Callable[[], float] = random.random) -> Backoff:
    """Delay before retry number `attempt` (1-based): base·2^(attempt-1), capped, with
    "equal jitter" (half fixed, half random) so retries of one outage spread out."""

    def delay(attempt: int) -> float:
        ceiling = min(cap, base * 2.0 ** max(0, attempt - 1))
        return ceiling / 2 + rng() * ceiling / 2

    return delay
