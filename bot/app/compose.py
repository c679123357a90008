"""The composition root of the App: builds the context and the delivery handler.

`ci-stability serve` calls `build_handler(settings, store, metrics)`; the returned
object is the worker's handler for one queued delivery.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web

from bot.advisor.runtime import Advisor
from bot.app.context import AppContext
from bot.app.dashboard import mount_dashboard
from bot.app.evidence_hooks import failure_index
from bot.app.metrics import Metrics
from bot.app.routes import dispatch
from bot.app.settings import Settings, SettingsError
from bot.evidence.buildkite import buildkite_webhook_handler
from bot.evidence.buildkite_rest import BuildkiteClient
from bot.github.auth import AppAuth
from bot.store import Delivery, Store

log = logging.getLogger("bot.compose")


class AppHandler:
    def __init__(self, context: AppContext) -> None:
        self.context = context

    async def __call__(self, delivery: Delivery, payload: dict[str, Any]) -> None:
        await dispatch(self.context, delivery, payload)

    def mount_routes(self, app: web.Application) -> None:
        mount_extra_routes(app, self)

    async def aclose(self) -> None:
        await self.context.session.close()
        if isinstance(self.context.review_pool, ThreadPoolExecutor):
            self.context.review_pool.shutdown(wait=False, cancel_futures=True)
        if self.context.advisor is not None:
            await self.context.advisor.aclose()


def build_handler(settings: Settings, store: Store, metrics: Metrics) -> AppHandler:
    # Only tests and replays against a local server shorten GitHub's write spacing.
    spacing = float(os.environ.get("CI_STABILITY_WRITE_SPACING", "1.0"))
    context = AppContext(
        settings=settings, store=store, metrics=metrics,
        session=aiohttp.ClientSession(), auth=AppAuth(settings.app_id, settings.private_key),
        bot_login=settings.bot_login, write_spacing=spacing,
        advisor=Advisor.from_env(os.environ, observe=metrics.advisor_request),
        # Threads, not processes: a review is a generator of API calls (a flow), whose
        # steps cannot move between processes; the GIL's 5 ms switch interval is what
        # keeps intake answering meanwhile (BENCHMARKS.md, "Intake during a review").
        review_pool=ThreadPoolExecutor(settings.review_threads, thread_name_prefix="review"),
    )
    return AppHandler(context)


def mount_extra_routes(app: web.Application, handler: AppHandler) -> None:
    """`POST /webhooks/buildkite` and `GET /` (the dashboard) when their tokens are set."""
    ctx = handler.context
    settings = ctx.settings
    mount_dashboard(app, settings.dashboard_token, lambda: failure_index(ctx), ctx.store,
                    lambda: ctx.clock())
    if not settings.buildkite_webhook_token:
        return
    client = BuildkiteClient(ctx.session, settings.buildkite_api_token or "",
                             base_url=settings.buildkite_api_url)
    buildkite = buildkite_webhook_handler(
        settings.buildkite_webhook_token, failure_index(ctx), client.log_stream_for,
        lambda: datetime.fromtimestamp(ctx.clock(), UTC), fetch_build_jobs=client.build_jobs,
    )
    app.router.add_post("/webhooks/buildkite", buildkite.handle)

    async def drain(_: web.Application) -> None:
        await buildkite.drain()

    app.on_cleanup.append(drain)


async def confirm_bot_login(settings: Settings, session: aiohttp.ClientSession) -> Settings:
    """The settings with the App's own login, read from `GET /app`.

    The login finds the bot's summary comment and reviews; a wrong one makes the bot
    post them again. A login set in CI_STABILITY_BOT_LOGIN that is not the App's is
    an error (`SettingsError`); the default is replaced, with a warning naming both.
    GitHub out of reach: the configured login stays, with a warning.
    """
    auth = AppAuth(settings.app_id, settings.private_key)
    try:
        slug = await auth.app_slug(session, settings.api_url)
    except Exception as exc:
        log.warning("could not read the App's login from GET /app; keeping the configured one",
                    extra={"bot_login": settings.bot_login, "reason": str(exc)[:200]})
        return settings
    actual = f"{slug}[bot]"
    if actual == settings.bot_login:
        return settings
    if settings.bot_login_set:
        raise SettingsError([
            f"CI_STABILITY_BOT_LOGIN is {settings.bot_login!r} but GitHub says this App "
            f"(id {settings.app_id}) posts as {actual!r}: fix or unset CI_STABILITY_BOT_LOGIN"])
    log.warning("the App's login differs from the default; using the App's",
                extra={"configured": settings.bot_login, "app": actual})
    return dataclasses.replace(settings, bot_login=actual)
