"""`ci-stability runs backfill --buildkite ORG/PIPELINE`: index past Buildkite builds.

Builds are listed newest first with `created_from` (Buildkite refuses deep listings
without a filter), 100 per page, following `Link: rel="next"`. Each build's
embedded jobs (retries included) are recorded; failed ones get their log analysed.
A finished build whose jobs are all indexed is marked complete and skipped on the
next pass; the cursor keeps the oldest still-running build (or the newest seen) so
a repeated backfill starts there. The client waits out Buildkite's rate limits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from bot.evidence.buildkite import (
    FINISHED_BUILD_STATES,
    PROVIDER,
    analysed,
    job_record,
    run_record,
)
from bot.evidence.buildkite_rest import BuildkiteClient
from bot.evidence.logstream import DEFAULT_MAX_LOG_BYTES
from bot.evidence.records import FailureIndex, from_text, to_text

Progress = Callable[[str], None]


@dataclass
class BuildkiteBackfillStats:
    builds_seen: int = 0
    builds_skipped: int = 0
    jobs: int = 0
    failures: int = 0
    logs: int = 0

    def summary(self) -> str:
        return (f"{self.builds_seen} builds ({self.builds_skipped} already indexed), "
                f"{self.jobs} jobs, {self.failures} failures, {self.logs} logs analysed")


def cursor_name(org: str, pipeline: str) -> str:
    return f"{PROVIDER}:{org.lower()}/{pipeline.lower()}"


async def _build(client: BuildkiteClient, index: FailureIndex, build: Mapping[str, Any],
                 pipeline: Mapping[str, Any], stats: BuildkiteBackfillStats, now: datetime,
                 max_log_bytes: int | None) -> bool:
    """Index one build; True when it is finished (and so need not be seen again)."""
    run = run_record(build, pipeline)
    if run is None:
        return True
    stats.builds_seen += 1
    if index.run_complete(PROVIDER, run.run_id):
        stats.builds_skipped += 1
        return True
    finished = str(build.get("state")) in FINISHED_BUILD_STATES
    index.upsert_run(run, now=now)
    jobs = build.get("jobs")
    for job in jobs if isinstance(jobs, list) else []:
        record = job_record(job, build, pipeline) if isinstance(job, Mapping) else None
        if record is None:
            continue
        stats.jobs += 1
        if record.failed:
            stats.failures += 1
            if index.has_job(PROVIDER, record.job_id, record.attempt):
                continue
            record = await analysed(record, client.log_stream_for, job, build, pipeline,
                                    max_log_bytes=max_log_bytes)
            stats.logs += not (record.log_note or "").startswith("log unavailable")
        index.upsert_job(record, now=now)
    if finished:
        index.upsert_run(dataclasses.replace(run, jobs_complete=True), now=now)
    return finished


async def backfill_buildkite(client: BuildkiteClient, index: FailureIndex, org: str,
                             pipeline: str, *, now: datetime, days: int = 14,
                             progress: Progress | None = None,
                             max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES,
                             max_pages: int = 100) -> BuildkiteBackfillStats:
    """Index the pipeline's builds of the last `days` days (or since the last pass)."""
    name = cursor_name(org, pipeline)
    start = now - timedelta(days=days)
    resumed = from_text(index.get_cursor(name))
    if resumed is not None and resumed > start:
        start = resumed
    path = f"/v2/organizations/{quote(org, safe='')}/pipelines/{quote(pipeline, safe='')}/builds"
    params = {"created_from": to_text(start), "include_retried_jobs": "true"}
    stats = BuildkiteBackfillStats()
    newest: datetime | None = None
    oldest_running: datetime | None = None
    async for page in client.pages(path, params, max_pages=max_pages):
        for build in page:
            if not isinstance(build, Mapping):
                continue
            owner = build.get("pipeline")
            owner = owner if isinstance(owner, Mapping) else {"slug": pipeline}
            owner = {**owner, "slug": owner.get("slug") or pipeline}
            created = from_text(build.get("created_at"))
            if created is not None and (newest is None or created > newest):
                newest = created
            done = await _build(client, index, build, owner, stats, now, max_log_bytes)
            if not done and created is not None and (
                    oldest_running is None or created < oldest_running):
                oldest_running = created
            if progress is not None:
                progress(f"{org}/{pipeline}: {stats.summary()}")
    mark = oldest_running or newest
    if mark is not None:
        index.set_cursor(name, to_text(mark) or "", now=now)
    return stats
