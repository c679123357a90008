"""Run flows over gidgethub on aiohttp (the App's driver).

gidgethub builds the requests (auth, media types, GHES base URLs) and keeps the
ETag cache; this driver adds what a long-running App needs around it: retries with
backoff, GitHub's rate-limit rules, redirects for log downloads, and call counting.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from concurrent.futures import Executor
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

import aiohttp
import gidgethub
import gidgethub.aiohttp
from gidgethub import sansio

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
    graphql_endpoint,
    lower_headers,
)
from bot.github.retry import RetryPolicy, decide

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
EtagCache = MutableMapping[str, tuple[str | None, str | None, Any, str | None]]

DEFAULT_TIMEOUT = aiohttp.ClientTimeout(total=30, sock_connect=10)
# A streamed body (a job log of any size) has no total deadline, only one per read.
STREAM_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=60)
STREAM_CHUNK = 256 * 1024
_REDIRECTS = {301, 302, 303, 307, 308}
_MAX_REDIRECTS = 3


class _RecordingAPI(gidgethub.aiohttp.GitHubAPI):
    """gidgethub's aiohttp client that keeps the raw last answer for the driver."""

    def __init__(self, session: aiohttp.ClientSession, timeout: aiohttp.ClientTimeout,
                 **kwargs: Any) -> None:
        super().__init__(session, USER_AGENT, **kwargs)
        self._http = session
        self._timeout = timeout
        self.last: tuple[int, Mapping[str, str], bytes] | None = None

    async def _request(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes = b"") -> tuple[int, Mapping[str, str], bytes]:
        async with self._http.request(method, url, headers=headers, data=body,
                                      timeout=self._timeout, allow_redirects=False) as response:
            raw = await response.read()
        self.last = (response.status, response.headers, raw)
        return response.status, response.headers, raw


def with_query(url: str, params: Mapping[str, str | int] | None) -> str:
    if not params:
        return url
    return f"{url}{'&' if '?' in url else '?'}{urlencode(params)}"


async def drive(flow: Flow[T], answer: Callable[[ApiCall], Awaitable[ApiResult]],
                steps: Executor | None = None) -> T:
    """Run `flow`, answering each of its calls with `answer`.

    With `steps`, the flow's own code between two calls (building the snapshot, the
    engine, rendering: the CPU-heavy part of a review) runs on that executor's
    threads, so the event loop keeps taking webhooks meanwhile; only the calls run on
    the loop. The steps of one flow still run one after another.
    """
    try:
        if steps is None:
            call = next(flow)
            while True:
                call = flow.send(await answer(call))
        loop = asyncio.get_running_loop()
        # The context goes along so the worker's log fields stay on the flow's lines.
        context = contextvars.copy_context()
        done, step = await loop.run_in_executor(steps, context.run, _first, flow)
        while not done:
            result = await answer(step)
            done, step = await loop.run_in_executor(steps, context.run, _send, flow, result)
        value: T = step
        return value
    except StopIteration as finished:
        returned: T = finished.value
        return returned
    finally:
        # A cancelled step may still be running on its thread; it ends by itself.
        with contextlib.suppress(ValueError):
            flow.close()


def _first(flow: Flow[Any]) -> tuple[bool, Any]:
    # StopIteration cannot cross a Future, so it comes back as (True, value).
    try:
        return False, next(flow)
    except StopIteration as finished:
        return True, finished.value


def _send(flow: Flow[Any], result: ApiResult) -> tuple[bool, Any]:
    try:
        return False, flow.send(result)
    except StopIteration as finished:
        return True, finished.value


class AsyncDriver:
    """Performs a flow's calls with one installation (or user) token; with `steps`,
    the flow's own code runs on that executor (see `drive`)."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        token: str,
        *,
        base_url: str = DEFAULT_API_URL,
        cache: EtagCache | None = None,
        timeout: aiohttp.ClientTimeout = DEFAULT_TIMEOUT,
        policy: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        rand: Callable[[], float] = random.random,
        on_call: OnCall | None = None,
        counter: CallCounter | None = None,
        write_spacing: float = 1.0,  # GitHub: >= 1 s between mutating requests
        steps: Executor | None = None,
    ) -> None:
        self.steps = steps
        self._session = session
        self._timeout = timeout
        self._cache = cache
        self._gh = _RecordingAPI(session, timeout, oauth_token=token, base_url=base_url,
                                 cache=cache)
        self.base_url = base_url
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._clock, self._rand = clock, rand
        self.counter = counter if counter is not None else CallCounter()
        self._budget = RateBudget(self.counter, on_call, clock, self.policy.max_wait)
        self._write_spacing = write_spacing
        self._last_write = float("-inf")

    def __repr__(self) -> str:  # never show the token
        return f"AsyncDriver(base_url={self.base_url!r})"

    async def run(self, flow: Flow[T]) -> T:
        return await drive(flow, self.call, self.steps)

    async def call(self, call: ApiCall) -> ApiResult:
        attempt = 0
        while True:
            attempt += 1
            await self._wait_for_budget(call)
            await self._space_writes(call)
            result: ApiResult | None
            try:
                result = await self._once(call)
            except (TimeoutError, aiohttp.ClientError):
                result = None
            self._observe(call, result)
            decision = decide(
                self.policy, attempt, result.status if result else None,
                result.headers if result else {}, result.data if result else None,
                self._clock(), self._rand,
            )
            if decision is None and result is not None:
                return result
            assert decision is not None
            what = f"status {result.status}" if result else "no answer (timeout or reset)"
            # An unanswered create may have landed: not re-sent here but left to the
            # delivery's retry, whose journal (or reply marker) finds what landed.
            doubt = result is None and call.is_write and call.method == "POST"
            if doubt or attempt >= self.policy.max_attempts or decision.wait > self.policy.max_wait:
                raise RetryableError(
                    f"GitHub {call.operation or call.method}: {what} after {attempt} attempt(s)",
                    retry_after=decision.wait if decision.rate_limited else None,
                )
            self.counter.retries += 1
            await self._sleep(decision.wait)

    async def _wait_for_budget(self, call: ApiCall) -> None:
        wait = self._budget.wait_before(call)
        if wait > 0:
            await self._sleep(wait)

    async def _space_writes(self, call: ApiCall) -> None:
        if not call.is_write or self._write_spacing <= 0:
            return
        wait = self._last_write + self._write_spacing - self._clock()
        if wait > 0:
            await self._sleep(wait)
        self._last_write = self._clock()

    def _observe(self, call: ApiCall, result: ApiResult | None) -> None:
        self._budget.observe(call, result.status if result else 0,
                             result.headers if result else {})

    async def _once(self, call: ApiCall, hops: int = 0) -> ApiResult:
        gh = self._gh
        gh.last = None
        url = (graphql_endpoint(self.base_url) if call.url == GRAPHQL_PATH
               else with_query(call.url, call.params))
        body = b"" if call.body is None else call.body
        method = call.method.upper()
        try:
            if method == "GET":
                data = await gh.getitem(url, {}, accept=call.accept)
            elif method == "POST":
                data = await gh.post(url, {}, data=body, accept=call.accept)
            elif method == "PATCH":
                data = await gh.patch(url, {}, data=body, accept=call.accept)
            elif method == "PUT":
                data = await gh.put(url, {}, data=body, accept=call.accept)
            else:
                await gh.delete(url, {}, data=body, accept=call.accept)
                data = None
        except (gidgethub.GitHubException, ValueError, LookupError, TypeError, AttributeError):
            # gidgethub turns error statuses (and bodies it cannot decode, such as a
            # binary file) into exceptions; the flow wants the raw answer instead.
            if gh.last is None:
                raise
        else:
            if gh.last is not None and gh.last[0] == 304:
                return self._from_cache(url, gh.last[1], data)
        assert gh.last is not None
        status, headers, raw = gh.last
        lowered = lower_headers(headers)
        location = lowered.get("location")
        if status in _REDIRECTS and location and hops < _MAX_REDIRECTS:
            return await self._follow(call, status, location, hops)
        return ApiResult(status, lowered, decode_body(lowered, raw))

    def _from_cache(self, url: str, headers: Mapping[str, str], data: Any) -> ApiResult:
        lowered = lower_headers(headers)
        filled = sansio.format_url(url, {}, base_url=self.base_url)
        entry = self._cache.get(filled) if self._cache is not None else None
        if entry is not None and entry[3] and "link" not in lowered:
            lowered["link"] = f'<{entry[3]}>; rel="next"'
        if isinstance(data, str):
            data = data.encode("utf-8")
        return ApiResult(200, lowered, data, from_cache=True)

    async def _follow(self, call: ApiCall, status: int, location: str, hops: int) -> ApiResult:
        same_origin = urlsplit(location)[:2] == urlsplit(self.base_url)[:2]
        if same_origin and status in {301, 307, 308}:
            return await self._once(replace(call, url=location, params=None), hops + 1)
        # Log downloads redirect to a short-lived pre-signed URL: fetch it without
        # our token, which must never leave for another host.
        if call.stream:
            response = await self._session.get(location, timeout=STREAM_TIMEOUT)
            headers = lower_headers(response.headers)
            if response.status == 200:
                return ApiResult(200, headers, ResponseStream(response))
            async with response:
                raw = await response.read()
            return ApiResult(response.status, headers, decode_body(headers, raw))
        async with self._session.get(location, timeout=self._timeout) as response:
            raw = await response.read()
            headers = lower_headers(response.headers)
        return ApiResult(response.status, headers, decode_body(headers, raw))


class ResponseStream:
    """An answer's body handed over unread: iterate it chunk by chunk, then close it."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_chunked(STREAM_CHUNK):
                yield chunk
        finally:
            self._response.release()

    def close(self) -> None:
        self._response.release()
