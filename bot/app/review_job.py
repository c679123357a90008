"""One review of one PR in the App: fetch, run the engine, publish, persist state."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from bot.app.advisor import AdvisingDriver, advice_step, chain, repo_config
from bot.app.claims import ensure_held, held_delivery
from bot.app.context import AppContext
from bot.app.evidence_hooks import duplicates_for, evidence_for
from bot.core.config import ConfigError
from bot.core.report import Waiver
from bot.errors import PermanentError, RetryableError
from bot.github.calls import GitHubError
from bot.github.drive_async import AsyncDriver
from bot.github.pr_state import PrState
from bot.github.publish import fail_check
from bot.github.pull import fetch_config, get_pull
from bot.github.reactions import read_thumbs_down
from bot.github.review import ReviewRequest, load_config, review_pull_request
from bot.store import Store, StoreJournal
from rules import ALL_RULES, RULES_BY_ID, option_specs

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
    """The App's wrapping of the one review pipeline: waivers, hooks, checkpoint, metrics."""
    full_name = f"{owner}/{repo}"
    driver = await ctx.driver(installation)
    decorate, digest = evidence_for(ctx, full_name)

    def checkpoint(state: dict[str, Any]) -> None:
        ensure_held()  # a replica whose lease ran out must not overwrite the new holder's
        ctx.store.put_pr_state(full_name, number, state)

    # Every write's intent and result, in the store: a worker on any replica that
    # takes this PR over after a crash knows which of them landed.
    journal = StoreJournal(ctx.store, full_name, number, held_by=held_delivery())
    delivery = ctx.store.get_delivery(delivery_id) if delivery_id else None

    def superseded() -> bool:
        # The newest head wins: a push queued after this delivery (the debounce key
        # of bot/app/web.py) reviews the PR again, so this review need not publish.
        return delivery is not None and ctx.store.has_newer_pending(
            f"{full_name}#{number}", delivery.received_at)

    started = ctx.clock()
    # Reactions are read only on a PR the bot had commented inline on before this review.
    had_inline = bool(PrState.from_dict(ctx.store.get_pr_state(full_name, number)).posted)
    try:
        enrich = duplicates_for(ctx)
        runner: AsyncDriver | AdvisingDriver = driver
        pull: dict[str, Any] | None = None
        config_text: str | None = None
        if ctx.advisor is not None:  # only then is the config read ahead, to see `advisor:`
            pull, config_text, config = await repo_config(driver, owner, repo, number)
            if config.advisor:
                enrich = chain(enrich, advice_step(ctx, ctx.advisor))
                runner = AdvisingDriver(driver, ctx.advisor)
        request = ReviewRequest(
            owner, repo, number, rules=ALL_RULES, option_specs=option_specs(),
            bot_login=ctx.bot_login, waivers=waivers_for(ctx.store, full_name, number),
            force=force, skip_drafts=draft, decorate=decorate, extra_digest=digest,
            enrich=enrich, checkpoint=checkpoint, pull=pull, config_text=config_text,
            journal=journal, superseded=superseded, limits=ctx.settings.review_limits,
        )
        outcome = await runner.run(
            review_pull_request(request, ctx.store.get_pr_state(full_name, number)))
    except RetryableError:
        raise
    except (GitHubError, ConfigError, ValueError, KeyError) as exc:
        await _record_crash(ctx, installation, owner, repo, number, exc)
        raise PermanentError(f"review of {full_name}#{number} failed: {exc}") from exc
    if outcome.state is not None:
        ensure_held()
        ctx.store.put_pr_state(full_name, number, outcome.state)
        ctx.store.journal_clear(full_name, number)  # the state now says what landed
    if not outcome.skipped:
        ctx.metrics.review_latency(ctx.clock() - started)
    if had_inline:
        await _take_thumbs_down(ctx, driver, owner, repo, number)
    log.info("skipped" if outcome.skipped else "reviewed", extra={
        "delivery": delivery_id, "repo": full_name, "pr": number,
        "head_sha": outcome.snapshot.head_sha if outcome.snapshot else None,
        "skipped": outcome.skip_reason or False,
        "conclusion": outcome.report.conclusion if outcome.report else None,
    })


async def _take_thumbs_down(ctx: AppContext, driver: AsyncDriver, owner: str, repo: str,
                            number: int) -> None:
    """Record 👎 reactions on the bot's inline comments as misfires (GitHub sends no
    webhook for them, so they are read at each review). A failure here is logged and
    leaves the review as it is; the next review reads them again."""
    full_name = f"{owner}/{repo}"
    counts, recorded = ctx.store.reactions_read(full_name, number)
    try:
        read = await driver.run(read_thumbs_down(owner, repo, number, ctx.bot_login,
                                                 counts, recorded))
    except (GitHubError, RetryableError) as exc:
        log.warning("could not read the reactions on the inline comments: %s", exc,
                    extra={"repo": full_name, "pr": number})
        return
    verdicts = [v for v in read.verdicts if v.rule in RULES_BY_ID]
    added = ctx.store.record_reactions(full_name, number, read.counts, verdicts, ctx.clock())
    if added:
        log.info("misfires from reactions", extra={"repo": full_name, "pr": number,
                                                   "added": added})


async def _record_crash(ctx: AppContext, installation: int, owner: str, repo: str,
                        number: int, exc: Exception) -> None:
    """Put the failure on the check run so the PR shows it, instead of a silent gap."""
    full_name = f"{owner}/{repo}"
    try:
        driver = await ctx.driver(installation)
        pull = await driver.run(get_pull(owner, repo, number))
        text = await driver.run(fetch_config(owner, repo, pull["base"]["repo"]["default_branch"]))
        config, _ = load_config(text, option_specs())  # a bad file: the defaults (neutral)
        state = await driver.run(fail_check(
            owner, repo, pull["head"]["sha"], ctx.store.get_pr_state(full_name, number),
            journal=StoreJournal(ctx.store, full_name, number),
            summary=f"The review could not complete ({type(exc).__name__}). It will run "
                    "again on the next push, or comment `/stability review`.",
            conclusion=config.on_error,
        ))
        ctx.store.put_pr_state(full_name, number, state)
    except Exception:  # reporting the failure must not hide the original one
        log.exception("could not record the failed review on the check run")
