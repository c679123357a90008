"""The composition root of the App: builds the context and the delivery handler.

`ci-stability serve` calls `build_handler(settings, store, metrics)`; the returned
object is the worker's handler for one queued delivery.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web

from bot.advisor.runtime import Advisor
from bot.app.context import AppContext
from bot.app.evidence_hooks import failure_index
from bot.app.metrics import Metrics
from bot.app.routes import dispatch
from bot.app.settings import Settings
from bot.evidence.buildkite import buildkite_webhook_handler
from bot.evidence.buildkite_rest import BuildkiteClient
from bot.github.auth import AppAuth
from bot.store import Delivery, Store


class AppHandler:
    def __init__(self, context: AppContext) -> None:
        self.context = context

    async def __call__(self, delivery: Delivery, payload: dict[str, Any]) -> None:
        await dispatch(self.context, delivery, payload)

    def mount_routes(self, app: web.Application) -> None:
        mount_extra_routes(app, self)

    async def aclose(self) -> None:
        await self.context.session.close()
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
    )
    return AppHandler(context)


def mount_extra_routes(app: web.Application, handler: AppHandler) -> None:
    """`POST /webhooks/buildkite` when a Buildkite webhook token is configured."""


    ctx = handler.context
    settings = ctx.settings
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
