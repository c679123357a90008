"""`AppContext`: what every App handler may use, built once per process.

It imports no handler, so handlers, routes and the composition root all depend on
this module and never on each other in a circle.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field

import aiohttp
from gidgethub.aiohttp import GitHubAPI

from bot.advisor.runtime import Advisor
from bot.app.claims import GuardedDriver
from bot.app.metrics import Metrics, metrics_hook
from bot.app.settings import Settings
from bot.evidence.duplicates import FilesCache
from bot.evidence.records import FailureIndex
from bot.github.auth import AppAuth
from bot.github.drive_async import DEFAULT_TIMEOUT, AsyncDriver
from bot.github.etag_cache import BoundedCache
from bot.store import Store


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
    advisor: Advisor | None = None  # the LLM advisor, when the operator configured one
    # Tests shorten GitHub's ≥1 s spacing between writes; production keeps it.
    write_spacing: float = 1.0
    timeout: aiohttp.ClientTimeout = DEFAULT_TIMEOUT
    # Where reviews' CPU work runs (bot/github/drive_async.py `drive`); None: on the loop.
    review_pool: Executor | None = None

    async def driver(self, installation_id: int) -> AsyncDriver:
        token_api = GitHubAPI(self.session, "ci-stability-bot", base_url=self.settings.api_url)
        token = await self.auth.installation_token(token_api, installation_id)
        return GuardedDriver(
            self.session, token, base_url=self.settings.api_url,
            cache=self.caches.setdefault(installation_id, BoundedCache()),
            on_call=metrics_hook(self.metrics), write_spacing=self.write_spacing,
            timeout=self.timeout, steps=self.review_pool,
        )
