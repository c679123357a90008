"""Run flows over PyGithub's requester (the CLI's driver).

PyGithub's `GithubRetry` (a urllib3 `Retry`) handles secondary rate limits,
`Retry-After` and 5xx/timeouts inside the HTTP layer; this driver turns what is
left (a status after the last attempt, a timeout) into the same results and
errors as the async driver, and never raises for 404 or 422: flows decide.

Why PyGithub's requester and not its objects (`repo.get_pull(n).get_files()`): the flows
in bot/github are sans-I/O and shared with the App's async driver, so every call is an
explicit `ApiCall` a test can script and count. PyGithub's objects fetch lazily (a
property access can be a request), paginate with their own `PaginatedList` and would
give the CLI a second, different implementation of each flow. What PyGithub is good at
is kept: authentication, `GithubRetry` (secondary limits, Retry-After, 5xx), throttling
between requests and writes, and connection pooling.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.GithubRetry import GithubRetry

from bot.errors import RetryableError
from bot.github.calls import (
    DEFAULT_API_URL,
    GRAPHQL_PATH,
    USER_AGENT,
    ApiCall,
    ApiResult,
    CallCounter,
    Flow,
    OnCall,
    RateBudget,
    decode_body,
    lower_headers,
)
from bot.github.retry import RetryPolicy, decide

T = TypeVar("T")
_ALL_METHODS = frozenset({"GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"})


def github_retry(
    *, total: int = 5, backoff_factor: float = 1.0, secondary_rate_wait: float = 60.0,
    max_rate_limit_wait: float = 120.0,
) -> GithubRetry:
    """GithubRetry that also retries 429, PATCH, and keeps the last answer when it gives up."""
    return GithubRetry(
        total=total,
        backoff_factor=backoff_factor,
        backoff_jitter=backoff_factor / 2,
        secondary_rate_wait=secondary_rate_wait,
        max_rate_limit_wait=max_rate_limit_wait,
        status_forcelist=[429, 500, 502, 503, 504],
        allowed_methods=_ALL_METHODS,
        raise_on_status=False,
        respect_retry_after_header=True,
    )


class SyncDriver:
    """Performs a flow's calls with a token (GITHUB_TOKEN, a PAT, an installation token)."""

    def __init__(
        self,
        token: str,
        *,
        base_url: str = DEFAULT_API_URL,
        timeout: int = 30,
        retry: GithubRetry | None = None,
        seconds_between_requests: float = 0.25,
        seconds_between_writes: float = 1.0,
        counter: CallCounter | None = None,
        on_call: OnCall | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_wait: float = 120.0,
    ) -> None:
        self.base_url = base_url
        self._timeout_seconds = timeout
        self._github = Github(
            # No token: anonymous calls (the manifest flow's code exchange).
            auth=Auth.Token(token) if token else None, base_url=base_url, timeout=timeout,
            retry=retry or github_retry(max_rate_limit_wait=max_wait), user_agent=USER_AGENT,
            seconds_between_requests=seconds_between_requests,
            seconds_between_writes=seconds_between_writes, lazy=True,
        )
        self._requester = self._github.requester
        self.counter = counter if counter is not None else CallCounter()
        self._budget = RateBudget(self.counter, on_call, clock, max_wait)
        self._sleep = sleep
        self._clock = clock

    def __repr__(self) -> str:  # never show the token
        return f"SyncDriver(base_url={self.base_url!r})"

    def close(self) -> None:
        self._github.close()

    def run(self, flow: Flow[T]) -> T:
        try:
            call = next(flow)
            while True:
                call = flow.send(self.call(call))
        except StopIteration as done:
            value: T = done.value
            return value
        finally:
            flow.close()

    def _follow(self, location: str, stream: bool) -> tuple[int, dict[str, str], Any]:
        response = requests.get(location, timeout=self._timeout_seconds, allow_redirects=True,
                                stream=stream)
        if stream and response.status_code == 200:
            # A file-like body read as it arrives (gzip undone), never held whole.
            response.raw.decode_content = True
            return 200, lower_headers(response.headers), response.raw
        return response.status_code, lower_headers(response.headers), response.content

    def call(self, call: ApiCall) -> ApiResult:
        self._wait_for_budget(call)
        try:
            # PyGithub knows its GraphQL endpoint (GHES: /api/graphql, not /api/v3/graphql).
            url = self._requester.graphql_url if call.url == GRAPHQL_PATH else call.url
            status, headers, text = self._requester.requestJson(
                call.method.upper(), url, parameters=dict(call.params or {}) or None,
                headers={"Accept": call.accept}, input=call.body, follow_302_redirect=False,
            )
            lowered = lower_headers(headers)
            raw = (text or "").encode("utf-8")
            if status in (301, 302, 307) and "location" in lowered:
                # Job logs redirect to a short-lived blob URL on another host: fetch it
                # ourselves, without our Authorization header (PyGithub would forward it).
                status, lowered, raw = self._follow(lowered["location"], call.stream)
            body = raw if hasattr(raw, "read") else decode_body(lowered, raw)
            result = ApiResult(status, lowered, body)
        except RateLimitExceededExceedsMaxWait as exc:
            self._observe(call, exc.status, {})
            raise RetryableError(f"GitHub {call.operation}: rate limited",
                                 retry_after=exc.wait) from None
        except GithubException as exc:  # GithubRetry raises for a 403 it will not retry
            result = ApiResult(exc.status, lower_headers(exc.headers or {}), exc.data)
        except (requests.RequestException, OSError) as exc:
            self._observe(call, 0, {})
            raise RetryableError(
                f"GitHub {call.operation}: no answer ({type(exc).__name__})"
            ) from None
        self._observe(call, result.status, result.headers)
        # GithubRetry already waited and retried; what is still retryable is final here.
        decision = decide(RetryPolicy(), 1, result.status, result.headers, result.data,
                          self._clock(), lambda: 0.0)
        if decision is not None:
            raise RetryableError(
                f"GitHub {call.operation}: status {result.status} after retries",
                retry_after=decision.wait if decision.rate_limited else None,
            )
        return result

    def _wait_for_budget(self, call: ApiCall) -> None:
        wait = self._budget.wait_before(call)
        if wait > 0:
            self._sleep(wait)

    def _observe(self, call: ApiCall, status: int, headers: Mapping[str, str]) -> None:
        self._budget.observe(call, status, headers)
