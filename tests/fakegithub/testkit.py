"""Shared set-up for the tests that drive the fake with gidgethub (the App's client)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

import aiohttp
import pytest
from gidgethub import BadRequest
from gidgethub.aiohttp import GitHubAPI

from .auth import generate_rsa_keypair
from .server import FakeGitHub
from .state import PullFile

APP_ID = 424242
REPO = "octo-org/ml-repo"
PATCH = (
    "@@ -10,3 +10,4 @@ jobs:\n   cpu:\n-    timeout: 30\n+    timeout: 60\n+    retries: 3\n   run"
)


@cache
def app_keys() -> tuple[str, str]:
    return generate_rsa_keypair()


def seeded_fake(**options: Any) -> FakeGitHub:
    fake = FakeGitHub(check_responses=True, **options)
    fake.register_app(APP_ID, app_keys()[1])
    fake.add_installation(11, [REPO])
    fake.add_pull(REPO, 7, title="Raise CPU timeout", body="flaky", files=[
        PullFile(".github/workflows/cpu.yml", PATCH),
        PullFile("docs/huge.md", None, additions=5000),
    ])
    return fake


@asynccontextmanager
async def client(fake: FakeGitHub, *, token: str | None = None,
                 cache: dict[str, Any] | None = None) -> AsyncIterator[GitHubAPI]:
    async with fake, aiohttp.ClientSession() as session:
        if token is None:
            token = fake.issue_installation_token(11)
        yield GitHubAPI(session, "ci-stability-bot-tests", oauth_token=token, base_url=fake.url,
                        cache=cache)


async def expect_status(status: int, call: Awaitable[Any]) -> BadRequest:
    with pytest.raises(BadRequest) as raised:
        await call
    assert raised.value.status_code == status
    return raised.value


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())
