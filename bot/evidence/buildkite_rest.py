"""A small Buildkite REST v2 client (aiohttp): builds, job logs, pagination, rate limits.

Buildkite limits REST calls per organization and per user (by default 200 and 50 a
minute) and reports both on every answer (`RateLimit-Remaining`/`-Reset` and
`RateLimit-User-*`). The client waits out an exhausted window before its next call
and, on 429, the `reset` seconds the answer names, instead of hammering. The token
is only ever sent to the configured API origin: log URLs that arrive in webhook
payloads are rebuilt on that origin, never followed elsewhere with credentials.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import aiohttp

DEFAULT_API_URL = "https://api.buildkite.com"
PER_PAGE = 100
LOG_CHUNK = 256 * 1024
_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="([^"]+)"')
_JOB_LOG_PATH = re.compile(
    r"^/v2/organizations/([^/]+)/pipelines/([^/]+)/builds/(\d+)/jobs/([^/]+)/log(?:\.txt)?$"
)
Sleep = Callable[[float], Awaitable[None]]


class BuildkiteError(Exception):
    """A Buildkite API answer the caller cannot work with (message is user-facing)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class BuildkiteRateLimited(BuildkiteError):
    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message, 429)
        self.retry_after = retry_after


@dataclass(frozen=True)
class RateLimits:
    """Parsed `RateLimit-*` headers: the stricter of the org and user windows."""

    remaining: int | None
    reset: float | None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> RateLimits:
        pairs = [
            (_int(headers.get(f"RateLimit{scope}-Remaining")),
             _float(headers.get(f"RateLimit{scope}-Reset")))
            for scope in ("", "-User")
        ]
        known = [(r, s) for r, s in pairs if r is not None]
        if not known:
            return cls(None, None)
        remaining, reset = min(known, key=lambda pair: pair[0])
        return cls(remaining, reset)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def next_link(header: str | None) -> str | None:
    for found in _LINK.finditer(header or ""):
        if "next" in found.group(2).split():
            return found.group(1)
    return None


def job_log_path(org: str, pipeline: str, number: int | str, job_id: str) -> str:
    parts = (quote(org, safe=""), quote(pipeline, safe=""), quote(str(number), safe=""),
             quote(job_id, safe=""))
    return "/v2/organizations/{}/pipelines/{}/builds/{}/jobs/{}/log".format(*parts)


def parse_job_log_url(url: str) -> tuple[str, str, str, str] | None:
    """(org, pipeline, build number, job id) of a REST `log_url` / `raw_log_url`."""
    found = _JOB_LOG_PATH.match(urlsplit(url).path)
    return None if found is None else (found[1], found[2], found[3], found[4])


class BuildkiteClient:
    def __init__(
        self,
        session: aiohttp.ClientSession,
        token: str,
        *,
        base_url: str = DEFAULT_API_URL,
        sleep: Sleep = asyncio.sleep,
        max_attempts: int = 5,
        max_wait: float = 120.0,
    ) -> None:
        self._session = session
        self._token = token
        self.base_url = base_url.rstrip("/")
        self._sleep = sleep
        self._max_attempts = max_attempts
        self._max_wait = max_wait
        self._pause = 0.0  # seconds to wait before the next call (exhausted window)
        self.calls = 0
        self.waited = 0.0

    def __repr__(self) -> str:  # never show the token
        return f"BuildkiteClient(base_url={self.base_url!r})"

    def _url(self, path_or_url: str, params: Mapping[str, Any] | None) -> str:
        if path_or_url.startswith(("http://", "https://")):
            if urlsplit(path_or_url)[:2] != urlsplit(self.base_url)[:2]:
                raise BuildkiteError(f"refusing to send the API token to {path_or_url!r}")
            url = path_or_url
        else:
            url = self.base_url + path_or_url
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params, doseq=True)
        return url

    async def _wait(self, seconds: float, what: str) -> None:
        if seconds > self._max_wait:
            raise BuildkiteRateLimited(
                f"Buildkite rate limit: {what} would have to wait {seconds:.0f} s", seconds
            )
        if seconds > 0:
            self.waited += seconds
            await self._sleep(seconds)

    async def _open(self, url: str, accept: str) -> aiohttp.ClientResponse:
        """A successful response (still open, body unread), after waits and retries."""
        headers = {"Authorization": f"Bearer {self._token}", "Accept": accept}
        for attempt in range(1, self._max_attempts + 1):
            await self._wait(self._pause, "the next call")
            self._pause = 0.0
            self.calls += 1
            try:
                response = await self._session.get(url, headers=headers)
            except (TimeoutError, aiohttp.ClientError) as exc:
                if attempt == self._max_attempts:
                    raise BuildkiteError(f"Buildkite API unreachable: {exc}") from exc
                await self._wait(min(2.0**attempt, 30.0), "a retry")
                continue
            limits = RateLimits.from_headers(response.headers)
            if limits.remaining == 0 and limits.reset is not None:
                self._pause = limits.reset
            if response.status < 400:
                return response
            body = await _json_or_none(response)
            response.release()
            if response.status == 429:
                reset = _float(str(body.get("reset"))) if isinstance(body, dict) else None
                wait = max(reset or 0.0, limits.reset or 0.0, 1.0)
                await self._wait(wait, "a rate-limited call")
                continue
            if response.status >= 500 and attempt < self._max_attempts:
                await self._wait(min(2.0**attempt, 30.0), "a retry")
                continue
            raise _error(response.status, body)
        raise BuildkiteError(f"Buildkite API: giving up after {self._max_attempts} attempts")

    async def get_json(self, path: str, params: Mapping[str, Any] | None = None
                       ) -> tuple[Any, str | None]:
        """Decoded body and the `rel="next"` link, if any."""
        response = await self._open(self._url(path, params), "application/json")
        async with response:
            try:
                data = await response.json(content_type=None)
            except ValueError as exc:
                raise BuildkiteError("Buildkite API answered with invalid JSON") from exc
            return data, next_link(response.headers.get("Link"))

    async def pages(self, path: str, params: Mapping[str, Any] | None = None,
                    *, max_pages: int = 100) -> AsyncIterator[list[Any]]:
        """Each page of a page-based listing, following `Link: rel="next"`."""
        url: str | None = self._url(path, {**(params or {}), "per_page": PER_PAGE})
        for _ in range(max_pages):
            if url is None:
                return
            data, url = await self.get_json(url)
            yield data if isinstance(data, list) else []

    async def build(self, org: str, pipeline: str, number: int | str) -> dict[str, Any]:
        path = "/v2/organizations/{}/pipelines/{}/builds/{}".format(
            quote(org, safe=""), quote(pipeline, safe=""), quote(str(number), safe=""))
        data, _ = await self.get_json(path, {"include_retried_jobs": "true"})
        return data if isinstance(data, dict) else {}

    async def build_jobs(self, build: Mapping[str, Any], pipeline: Mapping[str, Any]
                         ) -> list[Mapping[str, Any]]:
        """Every job (retries included) of the build a webhook announced."""
        org = _org_of(pipeline) or _org_of(build)
        if org is None or build.get("number") is None or not pipeline.get("slug"):
            raise BuildkiteError("the payload names no organization, pipeline or build number")
        full = await self.build(org, str(pipeline["slug"]), build["number"])
        jobs = full.get("jobs")
        return [job for job in jobs if isinstance(job, Mapping)] if isinstance(jobs, list) else []

    async def stream_log(self, org: str, pipeline: str, number: int | str, job_id: str
                         ) -> AsyncIterator[bytes]:
        """The raw log text of one job, chunk by chunk (`Accept: text/plain`)."""
        url = self._url(job_log_path(org, pipeline, number, job_id), None)
        response = await self._open(url, "text/plain")
        async with response:
            async for chunk in response.content.iter_chunked(LOG_CHUNK):
                yield chunk

    def log_stream_for(self, job: Mapping[str, Any], build: Mapping[str, Any],
                       pipeline: Mapping[str, Any]) -> AsyncIterator[bytes]:
        """The log of a job from a webhook or REST payload, fetched from our API origin."""
        for key in ("raw_log_url", "log_url"):
            parsed = parse_job_log_url(str(job.get(key) or ""))
            if parsed is not None:
                return self.stream_log(*parsed)
        org = _org_of(pipeline) or _org_of(build)
        if org is None or not job.get("id") or build.get("number") is None:
            raise BuildkiteError("the payload names no organization, build or job for the log")
        return self.stream_log(org, str(pipeline.get("slug") or ""), build["number"],
                               str(job["id"]))


def _org_of(obj: Mapping[str, Any]) -> str | None:
    found = re.match(r"^/v2/organizations/([^/]+)", urlsplit(str(obj.get("url") or "")).path)
    return found[1] if found else None


async def _json_or_none(response: aiohttp.ClientResponse) -> Any:
    try:
        return await response.json(content_type=None)
    except (ValueError, aiohttp.ClientError):
        return None


def _error(status: int, body: Any) -> BuildkiteError:
    message = body.get("message") if isinstance(body, dict) else None
    detail = f": {message}" if isinstance(message, str) else ""
    if status in {401, 403}:
        return BuildkiteError(
            f"Buildkite rejected BUILDKITE_API_TOKEN ({status}{detail}); it needs the "
            "read_builds and read_build_logs scopes", status)
    return BuildkiteError(f"Buildkite API answered {status}{detail}", status)
