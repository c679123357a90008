"""`ci-stability runs backfill --github OWNER/REPO`: index past Actions runs (sync driver).

Runs are listed newest first without a `created` filter (GitHub caps filtered
listings at 1,000 results, which a busy repository passes in a day), and the
listing stops at the first page that reaches past the window. A run whose jobs
are all indexed is marked complete and skipped next time; the cursor remembers
up to where a pass finished, so an interrupted backfill (Ctrl-C, an exhausted
rate limit) resumes where it stopped and a repeated one only looks at what is
new. Rate limits are the driver's business: it waits, or raises `RetryableError`
when the wait would be too long.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from bot.evidence.actions import (
    PROVIDER,
    RUNS_OPERATION,
    Fetched,
    SyncRunner,
    analyse_fetched_sync,
    fetch_job_log,
    job_record,
    run_record,
)
from bot.evidence.logstream import DEFAULT_MAX_LOG_BYTES
from bot.evidence.records import FailureIndex, from_text, to_text
from bot.github.calls import ApiCall, Flow, GitHubError, paginate, repo_path

Progress = Callable[[str], None]
JOBS_OPERATION = "actions/list-jobs-for-workflow-run"
WORKFLOW_RUNS_OPERATION = "actions/list-workflow-runs"


@dataclass
class BackfillStats:
    runs_seen: int = 0
    runs_skipped: int = 0
    jobs: int = 0
    failures: int = 0
    logs: int = 0
    pages: int = 0

    def summary(self) -> str:
        return (f"{self.runs_seen} runs ({self.runs_skipped} already indexed), {self.jobs} jobs, "
                f"{self.failures} failures, {self.logs} logs analysed")


def cursor_name(repo: str, workflow: str | None) -> str:
    return f"{PROVIDER}:{repo.lower()}:{workflow or '*'}"


def _page(call: ApiCall) -> Flow[tuple[list[dict[str, Any]], str | None]]:
    result = yield call
    if result.status != 200:
        raise GitHubError(call, result)
    data = result.data if isinstance(result.data, dict) else {}
    runs = data.get("workflow_runs")
    return [r for r in runs or [] if isinstance(r, dict)], result.next_url


def _runs_call(repo: str, workflow: str | None) -> ApiCall:
    owner, name = repo.split("/", 1)
    base = repo_path(owner, name)
    if workflow:
        return ApiCall("GET", f"{base}/actions/workflows/{quote(workflow, safe='')}/runs",
                       {"per_page": 100}, operation=WORKFLOW_RUNS_OPERATION)
    return ApiCall("GET", f"{base}/actions/runs", {"per_page": 100}, operation=RUNS_OPERATION)


def _jobs(repo: str, run_id: str) -> Flow[list[Any]]:
    owner, name = repo.split("/", 1)
    # filter=all: earlier attempts too, so a failure that passed on retry shows as flaky.
    return paginate(f"{repo_path(owner, name)}/actions/runs/{run_id}/jobs", JOBS_OPERATION,
                    params={"filter": "all"}, item_key="jobs")


class _Backfill:
    def __init__(self, driver: SyncRunner, index: FailureIndex, repo: str, now: datetime,
                 progress: Progress | None, max_log_bytes: int | None) -> None:
        self.driver, self.index, self.repo, self.now = driver, index, repo, now
        self.progress = progress
        self.max_log_bytes = max_log_bytes
        self.stats = BackfillStats()
        self.oldest_unfinished: datetime | None = None

    def say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)

    def run(self, run: Mapping[str, Any]) -> None:
        self.stats.runs_seen += 1
        run_id = str(run["id"])
        if self.index.run_complete(PROVIDER, run_id):
            self.stats.runs_skipped += 1
            return
        finished = run.get("status") == "completed"
        if not finished:
            created = from_text(run.get("created_at"))
            if created and (self.oldest_unfinished is None or created < self.oldest_unfinished):
                self.oldest_unfinished = created
        self.index.upsert_run(run_record(run, self.repo), now=self.now)
        all_done = True
        for job in self.driver.run(_jobs(self.repo, run_id)):
            record = job_record(job, self.repo, run=run) if isinstance(job, Mapping) else None
            if record is None:
                all_done = False
                continue
            self.stats.jobs += 1
            if record.failed:
                self.stats.failures += 1
                if self.index.has_job(PROVIDER, record.job_id, record.attempt):
                    continue  # analysed by a webhook or an earlier, interrupted pass
                result = self.driver.run(fetch_job_log(self.repo, record.job_id))
                fetched = Fetched(record, None, result.data if result.ok else None, result.status)
                record = analyse_fetched_sync(fetched, self.max_log_bytes)
                self.stats.logs += 1 if result.ok else 0
            self.index.upsert_job(record, now=self.now)
        if finished and all_done:
            self.index.upsert_run(run_record(run, self.repo, jobs_complete=True), now=self.now)
        self.say(f"{self.repo}: {self.stats.summary()}")


def backfill_github(driver: SyncRunner, index: FailureIndex, repo: str, *, now: datetime,
                    days: int = 14, workflow: str | None = None,
                    progress: Progress | None = None,
                    max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES) -> BackfillStats:
    """Index the Actions runs of the last `days` days (or since the last pass, if later)."""
    if "/" not in repo:
        raise ValueError(f"expected OWNER/REPO, got {repo!r}")
    name = cursor_name(repo, workflow)
    start = now - timedelta(days=days)
    resumed = from_text(index.get_cursor(name))
    if resumed is not None and resumed > start:
        start = resumed
    job = _Backfill(driver, index, repo, now, progress, max_log_bytes)
    newest: datetime | None = None
    call: ApiCall | None = _runs_call(repo, workflow)
    while call is not None:
        runs, next_url = driver.run(_page(call))
        reached_start = False
        for run in runs:
            created = from_text(run.get("created_at"))
            if created is not None and created < start:
                reached_start = True  # newest first: everything after is older still
                break
            if created is not None and (newest is None or created > newest):
                newest = created
            job.run(run)
        job.stats.pages += 1
        call = (ApiCall("GET", next_url, operation=call.operation)
                if next_url and not reached_start else None)
    # Next time start at the oldest run that was still going, or at the newest one seen.
    mark = job.oldest_unfinished or newest
    if mark is not None:
        index.set_cursor(name, to_text(mark) or "", now=now)
    return job.stats
