"""GitHub Actions ingestion: `workflow_job` webhooks (and backfilled jobs) into the index.

Every completed job is recorded, passing ones too: a failure that passed on retry
on the same commit is flaky, not broken. For failures the job log is fetched
(`GET /repos/{o}/{r}/actions/jobs/{id}/logs`, which answers 302 to a short-lived
link the driver follows without our token) and its root cause indexed. The GitHub
calls are flows, so the App's async driver and the CLI's sync driver both run them;
the log is analysed off the event loop, streamed when the driver hands over a stream.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
from collections.abc import AsyncIterator, Awaitable, Mapping
from datetime import datetime
from typing import Any, Protocol, TypeVar

from bot.evidence.logstream import DEFAULT_MAX_LOG_BYTES, LogAnalysis, analyse_chunks, analyse_read
from bot.evidence.records import FailureIndex, JobRecord, RunRecord, from_text
from bot.github.calls import ApiCall, ApiResult, Flow, repo_path

PROVIDER = "github-actions"
LOGS_OPERATION = "actions/download-job-logs-for-workflow-run"
RUNS_OPERATION = "actions/list-workflow-runs-for-repo"
_CONCLUSIONS = {"timed_out": "failure", "startup_failure": "failure"}
T = TypeVar("T")


class AsyncRunner(Protocol):
    def run(self, flow: Flow[T]) -> Awaitable[T]: ...


class SyncRunner(Protocol):
    def run(self, flow: Flow[T]) -> T: ...


# -- payloads → records (pure) ----------------------------------------------------------------
def _failed_step(job: Mapping[str, Any]) -> str | None:
    steps = job.get("steps")
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, Mapping) and step.get("conclusion") in {"failure", "timed_out"}:
            return str(step.get("name") or "") or None
    return None


def job_record(job: Mapping[str, Any], repo: str, *, run: Mapping[str, Any] | None = None,
               html_base: str = "https://github.com") -> JobRecord | None:
    """A completed workflow job (webhook `workflow_job` or REST job) as an index record."""
    if job.get("status") != "completed" or job.get("id") is None:
        return None
    conclusion = str(job.get("conclusion") or "unknown")
    run = run or {}
    run_id = job.get("run_id")
    pulls = run.get("pull_requests")
    first_pull = pulls[0] if isinstance(pulls, list) and pulls else None
    return JobRecord(
        provider=PROVIDER, job_id=str(job["id"]), attempt=int(job.get("run_attempt") or 1),
        repo=repo, pipeline=str(job.get("workflow_name") or run.get("name") or "Actions"),
        job_name=str(job.get("name") or "job"),
        conclusion=_CONCLUSIONS.get(conclusion, conclusion),
        run_id=None if run_id is None else str(run_id),
        workflow_path=run.get("path"), step=_failed_step(job),
        branch=job.get("head_branch") or run.get("head_branch"),
        commit_sha=job.get("head_sha") or run.get("head_sha"),
        pr_number=first_pull.get("number") if isinstance(first_pull, Mapping) else None,
        url=job.get("html_url"),
        run_url=run.get("html_url") or (
            f"{html_base}/{repo}/actions/runs/{run_id}" if run_id is not None else None),
        started_at=from_text(job.get("started_at")),
        finished_at=from_text(job.get("completed_at")),
    )


def run_record(run: Mapping[str, Any], repo: str, *, jobs_complete: bool = False) -> RunRecord:
    pulls = run.get("pull_requests")
    first_pull = pulls[0] if isinstance(pulls, list) and pulls else None
    return RunRecord(
        provider=PROVIDER, run_id=str(run["id"]), repo=repo,
        pipeline=str(run.get("name") or "Actions"), workflow_path=run.get("path"),
        branch=run.get("head_branch"), commit_sha=run.get("head_sha"),
        pr_number=first_pull.get("number") if isinstance(first_pull, Mapping) else None,
        url=run.get("html_url"), event=run.get("event"),
        started_at=from_text(run.get("run_started_at") or run.get("created_at")),
        finished_at=from_text(run.get("updated_at")) if run.get("status") == "completed" else None,
        conclusion=run.get("conclusion"), jobs_complete=jobs_complete,
    )


def repo_of(payload: Mapping[str, Any]) -> str | None:
    repository = payload.get("repository")
    name = repository.get("full_name") if isinstance(repository, Mapping) else None
    return name if isinstance(name, str) and name.count("/") == 1 else None


def _html_base(payload: Mapping[str, Any]) -> str:
    repository = payload.get("repository")
    html = repository.get("html_url") if isinstance(repository, Mapping) else None
    name = repo_of(payload)
    if isinstance(html, str) and name and html.endswith("/" + name):
        return html[: -len(name) - 1]
    return "https://github.com"


# -- flows ----------------------------------------------------------------------------------------
def fetch_job_log(repo: str, job_id: str) -> Flow[ApiResult]:
    owner, name = repo.split("/", 1)
    call = ApiCall("GET", f"{repo_path(owner, name)}/actions/jobs/{job_id}/logs",
                   operation=LOGS_OPERATION, stream=True)
    result = yield call
    return result


def find_run(repo: str, run_id: str, head_sha: str | None) -> Flow[dict[str, Any] | None]:
    """The workflow run of a job (its workflow file, event and PR), by its head SHA."""
    if not head_sha:
        return None
    owner, name = repo.split("/", 1)
    call = ApiCall("GET", f"{repo_path(owner, name)}/actions/runs",
                   {"head_sha": head_sha, "per_page": 100}, operation=RUNS_OPERATION)
    result = yield call
    runs = result.data.get("workflow_runs") if result.ok and isinstance(result.data, dict) else []
    for run in runs or []:
        if isinstance(run, dict) and str(run.get("id")) == run_id:
            return run
    return None


@dataclasses.dataclass(frozen=True)
class Fetched:
    """What a workflow-job flow got from GitHub: the records and the raw log, if any."""

    job: JobRecord
    run: RunRecord | None
    log: Any = None  # bytes, a file-like object, or an async iterator of bytes
    log_status: int | None = None


def workflow_job_flow(payload: Mapping[str, Any], *, know_run: bool) -> Flow[Fetched | None]:
    """Calls for one `workflow_job` delivery; None when it is not a completed job."""
    repo = repo_of(payload)
    job = payload.get("workflow_job")
    if payload.get("action") != "completed" or repo is None or not isinstance(job, Mapping):
        return None
    record = job_record(job, repo, html_base=_html_base(payload))
    if record is None:
        return None
    run: RunRecord | None = None
    if not know_run and record.run_id is not None:
        found = yield from find_run(repo, record.run_id, record.commit_sha)
        if found is not None:
            run = run_record(found, repo)
            record = job_record(job, repo, run=found, html_base=_html_base(payload)) or record
    if not record.failed:
        return Fetched(record, run)
    result = yield from fetch_job_log(repo, record.job_id)
    return Fetched(record, run, result.data if result.ok else None, result.status)


# -- log analysis ---------------------------------------------------------------------------------
def _reader(data: Any) -> io.BufferedIOBase | io.BytesIO | None:
    if isinstance(data, bytes | bytearray):
        return io.BytesIO(data)
    if isinstance(data, str):
        return io.BytesIO(data.encode("utf-8", "replace"))
    return data if hasattr(data, "read") else None


def with_analysis(record: JobRecord, analysis: LogAnalysis) -> JobRecord:
    return dataclasses.replace(record, **analysis.job_fields())


def _missing(record: JobRecord, status: int | None) -> JobRecord:
    reason = "expired or deleted" if status in {404, 410} else f"status {status}"
    return dataclasses.replace(record, log_note=f"log unavailable ({reason})")


async def analyse_fetched(fetched: Fetched, max_log_bytes: int | None) -> JobRecord:
    record, data = fetched.job, fetched.log
    if data is None:
        return _missing(record, fetched.log_status) if record.failed else record
    try:
        if hasattr(data, "__aiter__"):
            stream: AsyncIterator[bytes] = data
            return with_analysis(record, await analyse_chunks(stream, max_bytes=max_log_bytes))
        reader = _reader(data)
        if reader is None:
            return _missing(record, fetched.log_status)
        analysis = await asyncio.to_thread(analyse_read, reader.read, max_bytes=max_log_bytes)
        return with_analysis(record, analysis)
    finally:
        _close(data)


def _close(data: Any) -> None:
    """Release a streamed body (its connection) whether or not it was read to the end."""
    close = getattr(data, "close", None)
    if callable(close):
        close()


def analyse_fetched_sync(fetched: Fetched, max_log_bytes: int | None) -> JobRecord:
    reader = _reader(fetched.log)
    if reader is None:
        return _missing(fetched.job, fetched.log_status) if fetched.job.failed else fetched.job
    try:
        return with_analysis(fetched.job, analyse_read(reader.read, max_bytes=max_log_bytes))
    finally:
        _close(fetched.log)


# -- entry points -----------------------------------------------------------------------------
async def ingest_workflow_job(payload: Mapping[str, Any], driver: AsyncRunner,
                              index: FailureIndex, now: datetime, *,
                              max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES,
                              ) -> JobRecord | None:
    """Record one `workflow_job` delivery (the App's webhook handler calls this)."""
    job = payload.get("workflow_job")
    run_id = str(job.get("run_id")) if isinstance(job, Mapping) else ""
    know_run = await asyncio.to_thread(index.has_run, PROVIDER, run_id)
    fetched = await driver.run(workflow_job_flow(payload, know_run=know_run))
    if fetched is None:
        return None
    record = await analyse_fetched(fetched, max_log_bytes)
    if fetched.run is not None:
        await asyncio.to_thread(index.upsert_run, fetched.run, now=now)
    await asyncio.to_thread(index.upsert_job, record, now=now)
    return record


def ingest_workflow_job_sync(payload: Mapping[str, Any], driver: SyncRunner,
                             index: FailureIndex, now: datetime, *,
                             max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES,
                             ) -> JobRecord | None:
    job = payload.get("workflow_job")
    run_id = str(job.get("run_id")) if isinstance(job, Mapping) else ""
    fetched = driver.run(workflow_job_flow(payload, know_run=index.has_run(PROVIDER, run_id)))
    if fetched is None:
        return None
    record = analyse_fetched_sync(fetched, max_log_bytes)
    if fetched.run is not None:
        index.upsert_run(fetched.run, now=now)
    index.upsert_job(record, now=now)
    return record


def ingest_workflow_run(payload: Mapping[str, Any], index: FailureIndex, now: datetime) -> None:
    """Record a `workflow_run` delivery's run (workflow file, event, PR): no API calls."""
    repo, run = repo_of(payload), payload.get("workflow_run")
    if repo is not None and isinstance(run, Mapping) and run.get("id") is not None:
        index.upsert_run(run_record(run, repo), now=now)
