"""The protocol between flows and drivers: calls, results, errors and call counting."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar
from urllib.parse import quote

from bot.errors import PermanentError

T = TypeVar("T")

JSON_MEDIA = "application/vnd.github+json"
RAW_MEDIA = "application/vnd.github.raw+json"
DEFAULT_API_URL = "https://api.github.com"
PER_PAGE = 100  # GitHub's maximum page size

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

    @property
    def is_write(self) -> bool:
        return self.method.upper() not in {"GET", "HEAD"}


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
) -> Flow[list[Any]]:
    """Every item of a listing, following `Link: rel="next"` at 100 per page."""
    items: list[Any] = []
    call = ApiCall("GET", url, {**(params or {}), "per_page": PER_PAGE}, operation=operation)
    while True:
        result = yield call
        if result.status != 200:
            raise GitHubError(call, result)
        page = result.data[item_key] if item_key else result.data
        items.extend(page if isinstance(page, list) else [])
        next_url = result.next_url
        if not next_url or (limit is not None and len(items) >= limit):
            return items if limit is None else items[:limit]
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
        self.by_method[call.method.upper()] += 1
        self.by_status[status] += 1

    @property
    def total(self) -> int:
        return sum(self.by_method.values())

    @property
    def reads(self) -> int:
        return sum(n for method, n in self.by_method.items() if method in {"GET", "HEAD"})

    @property
    def writes(self) -> int:
        return self.total - self.reads

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total, "reads": self.reads, "writes": self.writes,
            "retries": self.retries, "by_operation": dict(sorted(self.by_operation.items())),
            "by_status": {str(k): v for k, v in sorted(self.by_status.items())},
        }
