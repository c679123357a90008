"""Where the App meets the failure index: ingestion, the review section, `/stability runs`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.report import Report
from bot.snapshot import PullRequestSnapshot

if TYPE_CHECKING:
    from bot.app import AppContext
    from bot.evidence.records import FailureIndex

log = logging.getLogger("bot.evidence")
Decorate = Callable[[Report, PullRequestSnapshot], Report]


def failure_index(ctx: AppContext) -> FailureIndex:
    """The index, opened on first use in the App's database file."""
    if ctx.failure_index is None:
        from bot.evidence.index import SqliteFailureIndex

        ctx.failure_index = SqliteFailureIndex(ctx.settings.db_path)
    return ctx.failure_index


def _now(ctx: AppContext) -> datetime:
    return datetime.fromtimestamp(ctx.clock(), UTC)


def evidence_for(ctx: AppContext, full_name: str) -> tuple[Decorate, str]:
    """The review's "Prior failing runs" decorator and the index digest that keys it."""
    from bot.evidence.lookup import evidence_decorator, index_digest

    index = failure_index(ctx)
    return evidence_decorator(index, now=_now(ctx)), index_digest(index, full_name)


async def ingest_workflow_job(ctx: AppContext, installation: int, payload: dict[str, object]
                              ) -> None:
    from bot.evidence import actions

    driver = await ctx.driver(installation)
    record = await actions.ingest_workflow_job(payload, driver, failure_index(ctx), _now(ctx))
    if record is not None:
        log.info("indexed job", extra={"repo": record.repo, "job": record.job_name,
                                       "category": record.category})


async def runs_reply(ctx: AppContext, installation: int, owner: str, repo: str,
                     number: int) -> str:
    """`/stability runs`: the same table the summary shows, from the PR's current files."""
    from bot.evidence.lookup import prior_failing_runs
    from bot.evidence.section import runs_reply as render_reply
    from bot.github.snapshot_flow import fetch_snapshot

    driver = await ctx.driver(installation)
    snapshot = await driver.run(
        fetch_snapshot(owner, repo, number, wants_contents=lambda _path: False))
    relevance = prior_failing_runs(failure_index(ctx), snapshot, now=_now(ctx))
    return render_reply(relevance)
