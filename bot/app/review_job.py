"""One review of one PR in the App: fetch, run the engine, publish, persist state."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.core.config import ConfigError
from bot.core.report import Waiver
from bot.errors import PermanentError, RetryableError
from bot.github.calls import GitHubError
from bot.github.publish import fail_check, start_check
from bot.github.pull import fetch_config, get_pull
from bot.github.review import (
    ReviewRequest,
    inputs_digest,
    load_config,
    review_pull_request,
    unchanged,
)

if TYPE_CHECKING:
    from bot.app.compose import AppContext
    from bot.store import Store

log = logging.getLogger("bot.review")


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def waivers_for(store: Store, full_name: str, number: int) -> list[Waiver]:
    return [Waiver(w.rule, w.path, w.reason, w.by, iso(w.at))
            for w in store.list_waivers(full_name, number)]


async def review_pull(
    ctx: AppContext, installation: int, owner: str, repo: str, number: int, *,
    force: bool = False, draft: bool = False, delivery_id: str = "",
) -> None:
    from bot.app.evidence_hooks import duplicates_for, evidence_for
    from rules import ALL_RULES

    full_name = f"{owner}/{repo}"
    driver = await ctx.driver(installation)
    pull = await driver.run(get_pull(owner, repo, number))
    config_text = await driver.run(
        fetch_config(owner, repo, pull["base"]["repo"]["default_branch"]))
    config, _problem = load_config(config_text)
    if draft and pull.get("draft") and not config.review_drafts:
        log.info("draft PR skipped", extra={"repo": full_name, "pr": number})
        return
    decorate, digest = evidence_for(ctx, full_name)
    request = ReviewRequest(
        owner, repo, number, bot_login=ctx.bot_login,
        waivers=waivers_for(ctx.store, full_name, number), force=force,
        config_text=config_text, decorate=decorate, extra_digest=digest, early_check=False,
        enrich=duplicates_for(ctx), pull=pull,
    )
    head = pull["head"]["sha"]
    prior = ctx.store.get_pr_state(full_name, number)
    if not force and prior and unchanged(prior, inputs_digest(pull, config_text, request,
                                                                ALL_RULES), head):
        log.info("unchanged", extra={"delivery": delivery_id, "repo": full_name, "pr": number,
                                     "head_sha": head})
        return
    started = ctx.clock()
    try:
        # Persist the in_progress check before the long part: a worker killed mid-review
        # then completes this same check run on restart instead of leaving it spinning.
        prior = await driver.run(start_check(owner, repo, head, prior))
        ctx.store.put_pr_state(full_name, number, prior)
        outcome = await driver.run(review_pull_request(request, prior))
    except RetryableError:
        raise
    except (GitHubError, ConfigError, ValueError, KeyError) as exc:
        await _record_crash(ctx, installation, owner, repo, number, exc)
        raise PermanentError(f"review of {full_name}#{number} failed: {exc}") from exc
    if outcome.state is not None:
        ctx.store.put_pr_state(full_name, number, outcome.state)
    if not outcome.skipped:
        ctx.metrics.review_latency(ctx.clock() - started)
    log.info("reviewed", extra={
        "delivery": delivery_id, "repo": full_name, "pr": number, "head_sha": head,
        "skipped": outcome.skipped,
        "conclusion": outcome.report.conclusion if outcome.report else None,
    })


async def _record_crash(ctx: AppContext, installation: int, owner: str, repo: str,
                        number: int, exc: Exception) -> None:
    """Put the failure on the check run so the PR shows it, instead of a silent gap."""
    full_name = f"{owner}/{repo}"
    try:
        driver = await ctx.driver(installation)
        pull = await driver.run(get_pull(owner, repo, number))
        state = await driver.run(fail_check(
            owner, repo, pull["head"]["sha"], ctx.store.get_pr_state(full_name, number),
            summary=f"The review could not complete ({type(exc).__name__}). It will run "
                    "again on the next push, or comment `/stability review`.",
        ))
        ctx.store.put_pr_state(full_name, number, state)
    except Exception:  # reporting the failure must not hide the original one
        log.exception("could not record the failed review on the check run")
