"""Buildkite ingestion: verified webhooks in, jobs and their root causes into the index.

`POST /webhooks/buildkite` carries either `X-Buildkite-Token` (the token in clear)
or `X-Buildkite-Signature: timestamp=T,signature=HEX` with
HEX = HMAC-SHA256(token, "T." + raw body). Both are checked in constant time
before the body is parsed, stale signatures are refused (replay), and a request
that fails either check is answered 401 with nothing stored. Logs are fetched
after the 202, in the background, so Buildkite's webhook timeout is never at risk.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from datetime import datetime
from typing import Any

from aiohttp import web

from bot.evidence.logstream import DEFAULT_MAX_LOG_BYTES, analyse_chunks
from bot.evidence.records import FailureIndex, JobRecord, RunRecord, from_text

log = logging.getLogger(__name__)

PROVIDER = "buildkite"
REPLAY_WINDOW_SECONDS = 300
MAX_BODY_BYTES = 5 * 1024 * 1024
_SIGNATURE = re.compile(r"^\s*timestamp=(\d{1,12})\s*,\s*signature=([0-9a-fA-F]{64})\s*$")
_REPO = re.compile(r"github\.com[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$")
# Webhook/REST job states → the index's conclusions (GitHub's vocabulary).
_CONCLUSIONS = {
    "passed": "success", "failed": "failure", "timed_out": "failure", "canceled": "cancelled",
    "canceling": "cancelled", "skipped": "skipped", "broken": "skipped", "not_run": "skipped",
    "waiting_failed": "skipped", "expired": "cancelled",
}
FINISHED_BUILD_STATES = {"passed", "failed", "canceled", "skipped", "not_run", "blocked"}

LogFetcher = Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]],
                      AsyncIterator[bytes]]
BuildJobsFetcher = Callable[[Mapping[str, Any], Mapping[str, Any]],
                            Awaitable[list[Mapping[str, Any]]]]


class WebhookRejected(Exception):
    """The request is not from Buildkite (or is a replay); the message says why."""


def verify_request(headers: Mapping[str, str], body: bytes, *, secret: str, now: datetime,
                   replay_window: float = REPLAY_WINDOW_SECONDS) -> None:
    """Raise `WebhookRejected` unless the token or signature header proves the sender."""
    if not secret:
        raise WebhookRejected("no Buildkite webhook token is configured")
    signature = headers.get("X-Buildkite-Signature")
    token = headers.get("X-Buildkite-Token")
    if signature is not None:
        found = _SIGNATURE.match(signature)
        if found is None:
            raise WebhookRejected("X-Buildkite-Signature is not 'timestamp=…,signature=…'")
        stamp, given = found.group(1), found.group(2).lower()
        expected = hmac.new(secret.encode(), stamp.encode() + b"." + body,
                            hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, given):
            raise WebhookRejected("X-Buildkite-Signature does not match the body")
        if abs(now.timestamp() - int(stamp)) > replay_window:
            raise WebhookRejected("X-Buildkite-Signature timestamp is outside the replay window")
        return
    if token is not None:
        if not hmac.compare_digest(token.encode(), secret.encode()):
            raise WebhookRejected("X-Buildkite-Token does not match")
        return
    raise WebhookRejected("neither X-Buildkite-Token nor X-Buildkite-Signature is present")


# -- payloads → records (pure) -----------------------------------------------------------
def repo_of(pipeline: Mapping[str, Any]) -> str:
    """`owner/name` of the pipeline's GitHub repository (or the raw repository string)."""
    raw = str(pipeline.get("repository") or "")
    found = _REPO.search(raw)
    return found.group(1) if found else (raw or str(pipeline.get("slug") or "unknown"))


def _pr_number(build: Mapping[str, Any]) -> int | None:
    pull = build.get("pull_request")
    ident = str(pull.get("id") or "") if isinstance(pull, Mapping) else ""
    return int(ident) if ident.isdigit() else None


def run_record(build: Mapping[str, Any], pipeline: Mapping[str, Any]) -> RunRecord | None:
    if build.get("number") is None:
        return None
    state = str(build.get("state") or "")
    return RunRecord(
        provider=PROVIDER, run_id=str(build["number"]), repo=repo_of(pipeline),
        pipeline=str(pipeline.get("slug") or pipeline.get("name") or "buildkite"),
        branch=build.get("branch"), commit_sha=build.get("commit"),
        pr_number=_pr_number(build), url=build.get("web_url"), event=build.get("source"),
        started_at=from_text(build.get("started_at")),
        finished_at=from_text(build.get("finished_at")),
        conclusion=_CONCLUSIONS.get(state, state or None),
        jobs_complete=False,
    )


def job_record(job: Mapping[str, Any], build: Mapping[str, Any],
               pipeline: Mapping[str, Any]) -> JobRecord | None:
    """The index record of a finished script job; None for other job types or states."""
    if job.get("type", "script") != "script" or not job.get("id"):
        return None
    state = str(job.get("state") or "")
    if state not in _CONCLUSIONS or build.get("number") is None:
        return None
    conclusion = _CONCLUSIONS[state]
    note = None
    if conclusion == "failure" and job.get("soft_failed"):
        conclusion, note = "soft-failed", "soft failure (allowed to fail)"
    elif conclusion == "failure" and (job.get("exit_status") == -1 or not job.get("started_at")):
        # Agent lost or never started: no log to read, and not the code's fault.
        conclusion, note = "infra", "the agent was lost or the job never started"
    return JobRecord(
        provider=PROVIDER, job_id=str(job["id"]), attempt=int(job.get("retries_count") or 0) + 1,
        repo=repo_of(pipeline), pipeline=str(pipeline.get("slug") or pipeline.get("name") or ""),
        job_name=str(job.get("name") or job.get("label") or job.get("step_key") or "job"),
        conclusion=conclusion, run_id=str(build["number"]), step=job.get("step_key"),
        branch=build.get("branch"), commit_sha=build.get("commit"), pr_number=_pr_number(build),
        url=job.get("web_url"), run_url=build.get("web_url"),
        started_at=from_text(job.get("started_at")), finished_at=from_text(job.get("finished_at")),
        log_note=note,
    )


async def analysed(record: JobRecord, fetch_log: LogFetcher, job: Mapping[str, Any],
                   build: Mapping[str, Any], pipeline: Mapping[str, Any], *,
                   max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES) -> JobRecord:
    """`record` with the root cause of its log (or a note saying why there is none)."""
    try:
        analysis = await analyse_chunks(fetch_log(job, build, pipeline), max_bytes=max_log_bytes)
    except Exception as exc:  # the job is still worth recording without its log
        reason = getattr(exc, "status", None) or type(exc).__name__
        log.warning("buildkite log for job %s unavailable: %s", record.job_id, reason)
        return dataclasses.replace(record, log_note=f"log unavailable ({reason})")
    return dataclasses.replace(record, **analysis.job_fields())


async def ingest_job(job: Mapping[str, Any], build: Mapping[str, Any],
                     pipeline: Mapping[str, Any], *, index: FailureIndex, fetch_log: LogFetcher,
                     now: datetime, max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES
                     ) -> JobRecord | None:
    record = job_record(job, build, pipeline)
    if record is None:
        return None
    if record.failed:
        record = await analysed(record, fetch_log, job, build, pipeline,
                                max_log_bytes=max_log_bytes)
    await asyncio.to_thread(index.upsert_job, record, now=now)
    return record


# -- the aiohttp handler ------------------------------------------------------------------
class BuildkiteWebhookHandler:
    """`app.router.add_post("/webhooks/buildkite", handler.handle)`; `await handler.drain()`
    on shutdown (logs are fetched in background tasks after the 202)."""

    def __init__(self, secret: str, index: FailureIndex, fetch_log: LogFetcher,
                 now: Callable[[], datetime], *, fetch_build_jobs: BuildJobsFetcher | None = None,
                 replay_window: float = REPLAY_WINDOW_SECONDS,
                 max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES,
                 max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self._secret = secret
        self._index = index
        self._fetch_log = fetch_log
        self._fetch_build_jobs = fetch_build_jobs
        self._now = now
        self._replay_window = replay_window
        self._max_log_bytes = max_log_bytes
        self._max_body_bytes = max_body_bytes
        self._tasks: set[asyncio.Task[None]] = set()
        self.processed = 0
        self.failed = 0

    def __repr__(self) -> str:
        return "BuildkiteWebhookHandler(secret=<redacted>)"

    async def handle(self, request: web.Request) -> web.Response:
        body = await _read_body(request, self._max_body_bytes)
        if body is None:
            return web.json_response({"error": "payload too large"}, status=413)
        try:
            verify_request(request.headers, body, secret=self._secret, now=self._now(),
                           replay_window=self._replay_window)
        except WebhookRejected as exc:
            log.warning("buildkite webhook rejected: %s", exc)
            return web.json_response({"error": str(exc)}, status=401)
        try:
            payload = json.loads(body)
        except ValueError:
            return web.json_response({"error": "the body is not JSON"}, status=400)
        if not isinstance(payload, dict):
            return web.json_response({"error": "the body is not a JSON object"}, status=400)
        event = str(request.headers.get("X-Buildkite-Event") or payload.get("event") or "")
        if event == "ping":
            return web.json_response({"ok": True, "event": "ping"})
        work = self._work(event, payload)
        if work is None:
            return web.json_response({"ok": True, "ignored": event}, status=202)
        self._spawn(work)
        return web.json_response({"ok": True, "event": event}, status=202)

    def _work(self, event: str, payload: Mapping[str, Any]) -> Coroutine[Any, Any, None] | None:
        build, pipeline = payload.get("build"), payload.get("pipeline")
        if not isinstance(build, Mapping) or not isinstance(pipeline, Mapping):
            return None
        if event == "job.finished" and isinstance(payload.get("job"), Mapping):
            return self._job_finished(payload["job"], build, pipeline)
        if event == "build.finished":
            return self._build_finished(build, pipeline)
        return None

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(self._guard(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guard(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
            self.processed += 1
        except Exception:
            self.failed += 1
            log.exception("buildkite webhook processing failed")

    async def _job_finished(self, job: Mapping[str, Any], build: Mapping[str, Any],
                            pipeline: Mapping[str, Any]) -> None:
        run = run_record(build, pipeline)
        if run is not None:
            await asyncio.to_thread(self._index.upsert_run, run, now=self._now())
        record = job_record(job, build, pipeline)
        if record is not None and self._index.has_job(PROVIDER, record.job_id, record.attempt):
            return  # a redelivery: the log was read the first time
        await ingest_job(job, build, pipeline, index=self._index, fetch_log=self._fetch_log,
                         now=self._now(), max_log_bytes=self._max_log_bytes)

    async def _build_finished(self, build: Mapping[str, Any],
                              pipeline: Mapping[str, Any]) -> None:
        run = run_record(build, pipeline)
        if run is None:
            return
        jobs: list[Mapping[str, Any]] = []
        if self._fetch_build_jobs is not None:
            # The webhook's build carries no jobs; catch the ones job.finished missed.
            jobs = await self._fetch_build_jobs(build, pipeline)
            for job in jobs:
                record = job_record(job, build, pipeline)
                if record is None or self._index.has_job(PROVIDER, record.job_id, record.attempt):
                    continue
                await ingest_job(job, build, pipeline, index=self._index,
                                 fetch_log=self._fetch_log, now=self._now(),
                                 max_log_bytes=self._max_log_bytes)
        complete = bool(jobs) and str(build.get("state")) in FINISHED_BUILD_STATES
        await asyncio.to_thread(self._index.upsert_run,
                                dataclasses.replace(run, jobs_complete=complete), now=self._now())

    async def drain(self) -> None:
        """Wait for every background ingestion started so far."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


async def _read_body(request: web.Request, limit: int) -> bytes | None:
    """The raw body (the signature covers its exact bytes), or None when over the limit."""
    if request.content_length is not None and request.content_length > limit:
        return None
    body = bytearray()
    while chunk := await request.content.read(64 * 1024):
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def buildkite_webhook_handler(secret: str, index: FailureIndex, fetch_log: LogFetcher,
                              now: Callable[[], datetime], **options: Any
                              ) -> BuildkiteWebhookHandler:
    """The handler the App mounts at `POST /webhooks/buildkite`."""
    return BuildkiteWebhookHandler(secret, index, fetch_log, now, **options)
