"""Rate-limit budgets, injected faults and Link-header pagination."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
    "again. If you reach out to GitHub Support for help, please include the request ID "
    "0000:00000:0000000:0000000:00000000."
)
MAX_PER_PAGE = 100
DEFAULT_PER_PAGE = 30


@dataclass
class Budget:
    resource: str
    limit: int
    remaining: int
    reset_at: datetime

    def refresh(self, now: datetime) -> None:
        if now >= self.reset_at:
            self.remaining = self.limit
            self.reset_at = now + timedelta(hours=1)

    def headers(self) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(self.limit),
            "x-ratelimit-remaining": str(self.remaining),
            "x-ratelimit-used": str(self.limit - self.remaining),
            "x-ratelimit-reset": str(int(self.reset_at.timestamp())),
            "x-ratelimit-resource": self.resource,
        }


@dataclass
class Fault:
    method: str
    path_regex: re.Pattern[str]
    times: int | None
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay: float = 0.0
    # A stall after the request took effect (the write landed, the answer is late), so
    # a client killed meanwhile never learns that it did.
    after: bool = False
    hits: int = 0  # requests this fault has caught
    skip: int = 0  # matching requests to let through first (stall the n-th write)

    def matches(self, method: str, paths: tuple[str, ...]) -> bool:
        return (
            (self.times is None or self.times > 0)
            and self.method in {"*", method}
            and any(self.path_regex.search(path) for path in paths)
        )

    def consume(self) -> None:
        self.hits += 1
        if self.times is not None:
            self.times -= 1


def default_fault_body(status: int) -> Any:
    """What github.com's front end answers for these statuses."""
    if status in {502, 503, 504}:
        # Load-balancer pages are HTML, not JSON; clients must not assume JSON errors.
        return f"<html><body><h1>{status} Server Error</h1></body></html>"
    if status in {403, 429}:
        return {
            "message": SECONDARY_RATE_LIMIT_MESSAGE,
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            "status": str(status),
        }
    return {"message": "Server Error", "status": str(status)}


def take_fault(faults: list[Fault], method: str, paths: tuple[str, ...], *, delays: bool,
               after: bool = False) -> Fault | None:
    """The first live fault for this request; `paths` are the raw and canonical forms."""
    for fault in faults:
        if ((fault.delay > 0) == delays and fault.after == after
                and fault.matches(method, paths)):
            if fault.skip > 0:
                fault.skip -= 1
                continue
            fault.consume()
            return fault
    return None


def page_bounds(query: dict[str, Any]) -> tuple[int, int]:
    per_page = min(max(int(query.get("per_page", DEFAULT_PER_PAGE)), 1), MAX_PER_PAGE)
    page = max(int(query.get("page", 1)), 1)
    return per_page, page


def link_header(base_url: str, path: str, query: dict[str, Any], total: int) -> str | None:
    """RFC 5988 links in GitHub's order: prev, next, last, first."""
    per_page, page = page_bounds(query)
    last = max(1, -(-total // per_page))

    def url(number: int) -> str:
        params = {k: v for k, v in query.items() if k != "page"}
        params = {k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()}
        return f"{base_url}{path}?{urlencode({**params, 'page': number})}"

    links = []
    if page > 1:
        links.append(f'<{url(min(page - 1, last))}>; rel="prev"')
    if page < last:
        links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
    if page > 1:
        links.append(f'<{url(1)}>; rel="first"')
    return ", ".join(links) or None
