"""Where the App meets the failure index: ingestion, the review section, `/stability runs`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from bot.app.context import AppContext
from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.evidence import actions
from bot.evidence.duplicates import FilesCache, attach_duplicates, find_duplicates
from bot.evidence.index import open_failure_index
from bot.evidence.lookup import (
    evidence_decorator,
    index_digest,
    prior_failing_runs,
    similar_failures,
)
from bot.evidence.records import FailureIndex
from bot.evidence.section import runs_reply as render_reply
from bot.github.calls import Flow
from bot.github.pull import fetch_snapshot
from rules.analysis.intent import follows_up_own_change, read_ci_fix

log = logging.getLogger("bot.evidence")
Decorate = Callable[[Report, PullRequestSnapshot], Report]
Enrich = Callable[[Report, PullRequestSnapshot], Flow[Report]]


def failure_index(ctx: AppContext) -> FailureIndex:
    """The index, opened on first use in the App's database (file or PostgreSQL)."""
    if ctx.failure_index is None:
        ctx.failure_index = open_failure_index(ctx.settings.db_path)
    return ctx.failure_index


def _now(ctx: AppContext) -> datetime:
    return datetime.fromtimestamp(ctx.clock(), UTC)


def evidence_for(ctx: AppContext, full_name: str) -> tuple[Decorate, str]:
    """The review's "Prior failing runs" decorator and the index digest that keys it."""
    index = failure_index(ctx)
    return evidence_decorator(index, now=_now(ctx)), index_digest(index, full_name)


def duplicates_for(ctx: AppContext) -> Enrich:
    """For a CI-fix PR: open or recently merged PRs on the same files or failing jobs."""
    if ctx.files_cache is None:
        ctx.files_cache = FilesCache()
    cache, now, index = ctx.files_cache, _now(ctx), failure_index(ctx)

    def enrich(report: Report, snapshot: PullRequestSnapshot) -> Flow[Report]:
        if read_ci_fix(snapshot) is None or follows_up_own_change(snapshot.title, snapshot.body):
            return report  # only a CI fix is asked for a duplicate-work check
        related = prior_failing_runs(index, snapshot, now=now).related
        jobs = sorted({r.job.job_name for r in related if r.job.job_name})
        found = yield from find_duplicates(snapshot, now=now, failing_jobs=jobs, cache=cache)
        return attach_duplicates(report, found)

    return enrich


async def ingest_workflow_job(ctx: AppContext, installation: int, payload: dict[str, object]
                              ) -> None:
    driver = await ctx.driver(installation)
    record = await actions.ingest_workflow_job(payload, driver, failure_index(ctx), _now(ctx))
    if record is not None:
        log.info("indexed job", extra={"repo": record.repo, "job": record.job_name,
                                       "category": record.category})


async def ingest_workflow_run(ctx: AppContext, payload: dict[str, object]) -> None:
    """A run's workflow file, event and PRs: lets a later job be matched to its PR."""
    await asyncio.to_thread(actions.ingest_workflow_run, payload, failure_index(ctx), _now(ctx))


async def runs_reply(ctx: AppContext, installation: int, owner: str, repo: str,
                     number: int) -> str:
    """`/stability runs`: the same table the summary shows, from the PR's current files."""
    driver = await ctx.driver(installation)
    snapshot = await driver.run(
        fetch_snapshot(owner, repo, number, wants_contents=lambda _path: False))
    index = failure_index(ctx)
    relevance = prior_failing_runs(index, snapshot, now=_now(ctx))
    return render_reply(relevance, similar_failures(index, relevance, snapshot.repo))
