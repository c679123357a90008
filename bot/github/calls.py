"""The protocol between flows and drivers: calls, results, errors, call counting, and
what both drivers share (the rate-limit budget, body decoding, the user agent).

The drivers (`drive_async`, `drive_sync`) keep only the HTTP call itself.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar
from urllib.parse import quote

import bot
from bot.errors import PermanentError, RetryableError

T = TypeVar("T")

JSON_MEDIA = "application/vnd.github+json"
RAW_MEDIA = "application/vnd.github.raw+json"
DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = f"ci-stability-bot/{bot.__version__}"
PER_PAGE = 100  # GitHub's maximum page size
# A flow's GraphQL call names this path; each driver maps it to the endpoint of its API
# root (api.github.com/graphql, or <host>/api/graphql on GitHub Enterprise Server).
GRAPHQL_PATH = "/graphql"

_LINK_RE = re.compile(r'<([^>]+)>\s*;\s*rel="([^"]+)"')


@dataclass(frozen=True)
class ApiCall:
    method: str
    # A path below the API root ("/repos/o/r/pulls/1"), or an absolute URL taken
    # verbatim from a `Link` header.
    url: str
    params: Mapping[str, str | int] | None = None
    body: Any = None
    accept: str = JSON_MEDIA
    operation: str = ""  # GitHub's OpenAPI operationId, for counts and metrics
    # A body of any size (a job log): the driver hands a successful answer over as a
    # stream (async iterator of bytes, or a file-like object) instead of reading it.
    stream: bool = False

    @property
    def is_write(self) -> bool:
        # A GraphQL query is a POST that changes nothing (this project sends no mutations).
        return self.method.upper() not in {"GET", "HEAD"} and self.url != GRAPHQL_PATH


@dataclass(frozen=True)
class ApiResult:
    status: int
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names
    # Decoded JSON; raw bytes for other media types; None for an empty body.
    data: Any = None
    from_cache: bool = False  # a 304 answered from the ETag cache

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def next_url(self) -> str | None:
        """The `rel="next"` link: pages are followed, never built by hand."""
        for url, rel in _LINK_RE.findall(self.header("link") or ""):
            if "next" in rel.split():
                return str(url)
        return None

    @property
    def message(self) -> str:
        if isinstance(self.data, Mapping) and isinstance(self.data.get("message"), str):
            return str(self.data["message"])
        return ""


Flow: TypeAlias = Generator[ApiCall, ApiResult, T]


class GitHubError(PermanentError):
    """GitHub answered a call with a status the flow cannot work with."""

    def __init__(self, call: ApiCall, result: ApiResult) -> None:
        detail = f": {result.message}" if result.message else ""
        super().__init__(f"{call.operation or call.method} answered {result.status}{detail}")
        self.status = result.status
        self.operation = call.operation
        self.result = result


def repo_path(owner: str, repo: str) -> str:
    return f"/repos/{quote(owner, safe='')}/{quote(repo, safe='')}"


def graphql_endpoint(base_url: str) -> str:
    """GitHub's GraphQL endpoint for a REST API root (GHES serves it beside /api/v3)."""
    root = base_url.rstrip("/")
    if root.endswith("/api/v3"):
        return root.removesuffix("/v3") + "/graphql"
    return root + GRAPHQL_PATH


def graphql(query: str, variables: Mapping[str, Any], operation: str = "graphql") -> ApiCall:
    """A GraphQL query as a call: POST {query, variables} to the GraphQL endpoint."""
    return ApiCall("POST", GRAPHQL_PATH, body={"query": query, "variables": dict(variables)},
                   operation=operation)


def send(call: ApiCall) -> Flow[ApiResult]:
    result = yield call
    return result


def expect(call: ApiCall, ok: tuple[int, ...] = (200, 201)) -> Flow[Any]:
    """The call's data, or GitHubError for any other status."""
    result = yield call
    if result.status not in ok:
        raise GitHubError(call, result)
    return result.data


def paginate(
    url: str, operation: str, *, params: Mapping[str, str | int] | None = None,
    item_key: str | None = None, limit: int | None = None,
    each: Callable[[Any], None] | None = None,
) -> Flow[list[Any]]:
    """Every item of a listing, following `Link: rel="next"` at 100 per page. With
    `each`, the items go to it as their page arrives (it keeps what it needs, so no
    page outlives the next) and the list returned is empty."""
    items: list[Any] = []
    seen = 0
    call = ApiCall("GET", url, {**(params or {}), "per_page": PER_PAGE}, operation=operation)
    while True:
        result = yield call
        if result.status != 200:
            raise GitHubError(call, result)
        page = result.data[item_key] if item_key else result.data
        page = page[: None if limit is None else limit - seen] if isinstance(page, list) else []
        seen += len(page)
        if each is None:
            items.extend(page)
        else:
            for item in page:
                each(item)
        next_url = result.next_url
        if not next_url or (limit is not None and seen >= limit):
            return items
        call = ApiCall("GET", next_url, None, operation=operation)


@dataclass
class CallCounter:
    """HTTP requests a driver made (retries included), by operation, method and status."""

    by_operation: Counter[str] = field(default_factory=Counter)
    by_method: Counter[str] = field(default_factory=Counter)
    by_status: Counter[int] = field(default_factory=Counter)
    retries: int = 0

    def record(self, call: ApiCall, status: int) -> None:
        self.by_operation[call.operation or f"{call.method} {call.url}"] += 1
        # A GraphQL query is counted as the read it is, not as a POST.
        self.by_method["QUERY" if call.url == GRAPHQL_PATH else call.method.upper()] += 1
        self.by_status[status] += 1

    @property
    def total(self) -> int:
        return sum(self.by_method.values())

    @property
    def reads(self) -> int:
        return sum(n for method, n in self.by_method.items() if method in {"GET", "HEAD", "QUERY"})

    @property
    def writes(self) -> int:
        return self.total - self.reads

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total, "reads": self.reads, "writes": self.writes,
            "retries": self.retries, "by_operation": dict(sorted(self.by_operation.items())),
            "by_status": {str(k): v for k, v in sorted(self.by_status.items())},
        }


OnCall = Callable[[str, int, int | None], None]  # operation, status (0: no answer), remaining


def lower_headers(headers: Mapping[str, Any]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in headers.items()}


def decode_body(headers: Mapping[str, str], raw: bytes) -> Any:
    """JSON when the answer says so (and parses); otherwise the raw bytes."""
    if not raw:
        return None
    if "json" in headers.get("content-type", ""):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


class RateBudget:
    """The primary rate limit as both drivers track it, and what they report per call.

    When a successful answer says no requests remain, later calls wait for the reset
    (or, if that is further than `max_wait`, fail as retryable with the wait).
    """

    def __init__(self, counter: CallCounter, on_call: OnCall | None,
                 clock: Callable[[], float], max_wait: float) -> None:
        self.counter = counter
        self._on_call = on_call
        self._clock = clock
        self.max_wait = max_wait
        self._exhausted_until = 0.0

    def wait_before(self, call: ApiCall) -> float:
        """Seconds to wait before `call` (0 when the budget is not exhausted)."""
        wait = self._exhausted_until - self._clock()
        if wait <= 0:
            return 0.0
        if wait > self.max_wait:
            raise RetryableError(f"GitHub rate limit exhausted before {call.operation}",
                                 retry_after=wait)
        return wait

    def observe(self, call: ApiCall, status: int, headers: Mapping[str, str]) -> None:
        """Count one HTTP request (status 0: no answer) and note the remaining budget."""
        self.counter.record(call, status)
        try:
            remaining: int | None = int(headers.get("x-ratelimit-remaining", ""))
        except ValueError:
            remaining = None
        if remaining == 0 and 200 <= status < 300:
            try:
                self._exhausted_until = float(headers.get("x-ratelimit-reset") or 0) + 1.0
            except ValueError:
                self._exhausted_until = self._clock() + 60.0
        if self._on_call is not None:
            self._on_call(call.operation, status, remaining)
