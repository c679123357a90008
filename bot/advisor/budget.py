"""Token budgets: per pull request and per day, checked before a request and charged after.

A request is only sent when both budgets still have room for the most it can cost
(the input budget plus the completion cap), so neither is ever overshot by more than
the server's own miscount. Days are UTC days of the caller's clock. The ledger lives
in the process (one per App, one per CLI run): with several App replicas each keeps
its own, so the per-day figure is per replica.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime


class TokenLedger:
    def __init__(self, per_pr: int, per_day: int, clock: Callable[[], float]) -> None:
        self.per_pr = per_pr
        self.per_day = per_day
        self._clock = clock
        self._day = ""
        self._day_used = 0
        self._pr_used: dict[str, int] = {}
        self._lock = threading.Lock()

    def _roll(self) -> None:
        day = datetime.fromtimestamp(self._clock(), UTC).strftime("%Y-%m-%d")
        if day != self._day:
            self._day, self._day_used, self._pr_used = day, 0, {}

    def refusal(self, pr: str, cost: int) -> str | None:
        """Why a request of up to `cost` tokens may not be sent now, or None."""
        with self._lock:
            self._roll()
            if self._day_used + cost > self.per_day:
                return (f"the day's token budget is used up ({self._day_used:,} of "
                        f"{self.per_day:,} tokens spent today)")
            spent = self._pr_used.get(pr, 0)
            if spent + cost > self.per_pr:
                return (f"this pull request's token budget is used up ({spent:,} of "
                        f"{self.per_pr:,} tokens spent on it today)")
            return None

    def charge(self, pr: str, tokens: int) -> None:
        with self._lock:
            self._roll()
            self._day_used += tokens
            self._pr_used[pr] = self._pr_used.get(pr, 0) + tokens

    def spent(self, pr: str | None = None) -> int:
        with self._lock:
            self._roll()
            return self._day_used if pr is None else self._pr_used.get(pr, 0)
