"""The GitHub App: composes the drivers, the store and the event handlers.

`ci-stability serve` calls `build_handler(settings, store, metrics)`; the returned
object is the worker's handler for one queued delivery.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web
from gidgethub.aiohttp import GitHubAPI

from bot.app.metrics import Metrics
from bot.app.routes import dispatch
from bot.app.settings import Settings
from bot.evidence.duplicates import FilesCache
from bot.evidence.records import FailureIndex
from bot.github.auth import AppAuth
from bot.github.drive_async import DEFAULT_TIMEOUT, AsyncDriver, metrics_hook
from bot.github.etag_cache import BoundedCache
from bot.store import Delivery, Store

log = logging.getLogger("bot.app")


@dataclass
class AppContext:
    """Everything a handler may use; built once per process."""

    settings: Settings
    store: Store
    metrics: Metrics
    session: aiohttp.ClientSession
    auth: AppAuth
    bot_login: str
    clock: Callable[[], float] = time.time
    caches: dict[int, BoundedCache] = field(default_factory=dict)
    failure_index: FailureIndex | None = None
    files_cache: FilesCache | None = None  # PR files seen by the duplicate-work search
    # Tests shorten GitHub's ≥1 s spacing between writes; production keeps it.
    write_spacing: float = 1.0
    timeout: aiohttp.ClientTimeout = DEFAULT_TIMEOUT

    async def driver(self, installation_id: int) -> AsyncDriver:
        token_api = GitHubAPI(self.session, "ci-stability-bot", base_url=self.settings.api_url)
        token = await self.auth.installation_token(token_api, installation_id)
        return AsyncDriver(
            self.session, token, base_url=self.settings.api_url,
            cache=self.caches.setdefault(installation_id, BoundedCache()),
            on_call=metrics_hook(self.metrics), write_spacing=self.write_spacing,
            timeout=self.timeout,
        )


class AppHandler:
    def __init__(self, context: AppContext) -> None:
        self.context = context

    async def __call__(self, delivery: Delivery) -> None:
        await dispatch(self.context, delivery)

    def mount_routes(self, app: web.Application) -> None:
        mount_extra_routes(app, self)

    async def aclose(self) -> None:
        await self.context.session.close()


def build_handler(settings: Settings, store: Store, metrics: Metrics) -> AppHandler:
    # Only tests and replays against a local server shorten GitHub's write spacing.
    spacing = float(os.environ.get("CI_STABILITY_WRITE_SPACING", "1.0"))
    context = AppContext(
        settings=settings, store=store, metrics=metrics,
        session=aiohttp.ClientSession(), auth=AppAuth(settings.app_id, settings.private_key),
        bot_login=settings.bot_login, write_spacing=spacing,
    )
    return AppHandler(context)


def mount_extra_routes(app: web.Application, handler: AppHandler) -> None:
    """`POST /webhooks/buildkite` when a Buildkite webhook token is configured."""
    from datetime import UTC, datetime

    from bot.app.evidence_hooks import failure_index
    from bot.evidence.buildkite import buildkite_webhook_handler
    from bot.evidence.buildkite_rest import BuildkiteClient

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
