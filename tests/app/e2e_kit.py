"""The whole App in-process: fake GitHub, real settings, store, worker, web app, handler."""

from __future__ import annotations

import copy
import dataclasses
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from bot.app.compose import AppHandler, build_handler
from bot.app.metrics import Metrics
from bot.app.queue import Worker, exponential_backoff
from bot.app.settings import Settings
from bot.app.web import build_web_app
from bot.store import SqliteStore, connect
from tests.app.helpers import SECRET, headers, payload, wait_until
from tests.fakegithub import FakeGitHub
from tests.github.kit import APP_ID, INSTALLATION, REPO, app_keys, new_fake

OWNER, NAME = REPO.split("/")


def pr_payload(action: str, number: int, head_sha: str, *, draft: bool = False,
               changes: dict[str, Any] | None = None) -> dict[str, Any]:
    """A real `pull_request` payload, pointed at our repo, PR and installation."""
    name = "pull_request.edited" if action == "edited" else f"pull_request.{action}"
    data = copy.deepcopy(payload(name))
    data["action"] = action
    data["installation"] = {"id": INSTALLATION, "node_id": "MDIz"}
    data["repository"].update(full_name=REPO, name=NAME)
    data["repository"]["owner"]["login"] = OWNER
    data["number"] = number  # as GitHub sends it: the same as pull_request.number
    pull = data["pull_request"]
    pull.update(number=number, draft=draft)
    pull["head"]["sha"] = head_sha
    if changes is not None:
        data["changes"] = changes
    return data


def comment_payload(number: int, body: str, user: str, *, user_type: str = "User",
                    comment_id: int | None = None) -> dict[str, Any]:
    data = copy.deepcopy(payload("issue_comment.created"))
    data["installation"] = {"id": INSTALLATION, "node_id": "MDIz"}
    data["repository"].update(full_name=REPO, name=NAME)
    data["repository"]["owner"]["login"] = OWNER
    data["issue"]["number"] = number
    data["issue"]["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"}
    data["comment"].update(body=body, id=comment_id or uuid.uuid4().int % 10**9)
    data["comment"]["user"].update(login=user, type=user_type)
    data["sender"].update(login=user, type=user_type)
    return data


@dataclass
class LiveApp:
    fake: FakeGitHub
    store: SqliteStore
    url: str
    session: aiohttp.ClientSession
    handler: AppHandler

    async def deliver(self, event: str, data: dict[str, Any],
                      delivery_id: str | None = None, secret: str = SECRET) -> int:
        body = json.dumps(data).encode()
        async with self.session.post(f"{self.url}/webhook", data=body,
                                     headers=headers(event, body, secret, delivery_id)) as resp:
            return resp.status

    async def settle(self) -> None:
        """Wait until no delivery is pending or running."""
        def idle() -> bool:
            counts = self.store.counts()
            return not counts.get("pending") and not counts.get("running")
        await wait_until(idle, timeout=60)


def settings_for(fake: FakeGitHub, db: Path) -> Settings:
    return Settings(app_id=APP_ID, private_key=app_keys()[0], webhook_secret=SECRET,
                    api_url=fake.url, db_path=str(db), debounce_seconds=0)


@asynccontextmanager
async def live_app(tmp_path: Path, fake: FakeGitHub | None = None,
                   **overrides: Any) -> AsyncIterator[LiveApp]:
    fake = fake or new_fake()
    await fake.start()
    settings = dataclasses.replace(settings_for(fake, tmp_path / "bot.db"), **overrides)
    store = connect(settings.db_path)
    metrics = Metrics()
    handler = build_handler(settings, store, metrics)
    handler.context.write_spacing = 0.0
    handler.context.timeout = aiohttp.ClientTimeout(total=2)  # so injected delays time out
    worker = Worker(store, handler, concurrency=1, max_attempts=3, metrics=metrics,
                    poll_interval=0.05, backoff=exponential_backoff(base=0.05, cap=0.2))
    app = build_web_app(settings, store, worker, metrics, debounce_seconds=0)
    handler.mount_routes(app)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    await worker.start()
    try:
        async with aiohttp.ClientSession() as session:
            yield LiveApp(fake, store, str(server.make_url("")).rstrip("/"), session, handler)
    finally:
        await worker.stop()
        await server.close()
        await handler.aclose()
        store.close()
        await fake.close()
