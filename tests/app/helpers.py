"""Shared helpers for the App-infrastructure tests: keys, signed deliveries, a live app."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from bot.app.metrics import Metrics
from bot.app.queue import Worker
from bot.app.web import build_web_app
from bot.store import SqliteStore, connect

WEBHOOKS = Path(__file__).resolve().parents[1] / "data" / "github" / "webhooks"
SECRET = "test-webhook-secret-0123"


@cache
def rsa_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


def ec_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def payload_bytes(name: str) -> bytes:
    """A vendored real payload, e.g. `pull_request.synchronize`."""
    return (WEBHOOKS / f"{name}.json").read_bytes()


def payload(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(payload_bytes(name))
    return data


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def headers(event: str, body: bytes, secret: str = SECRET,
            delivery_id: str | None = None) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id or str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(secret, body),
    }


async def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll, never assert on timing: a generous timeout only bounds a broken test."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met within the timeout")
        await asyncio.sleep(0.01)


class FakeClock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class LiveApp:
    store: SqliteStore
    metrics: Metrics
    worker: Worker | None
    server: TestServer
    session: aiohttp.ClientSession

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))

    async def post(self, event: str, body: bytes, **kwargs: Any) -> aiohttp.ClientResponse:
        hdrs = kwargs.pop("headers", None) or headers(event, body, **kwargs)
        async with self.session.post(self.url("/webhook"), data=body, headers=hdrs) as resp:
            await resp.read()
            return resp


@asynccontextmanager
async def live_app(
    db: Path,
    handler: Callable[[Any], Awaitable[None]] | None = None,
    *,
    secret: str = SECRET,
    clock: Callable[[], float] = time.time,
    debounce: float = 0.0,
    max_attempts: int = 3,
    backoff: Callable[[int], float] | None = None,
    **app_kwargs: Any,
) -> AsyncIterator[LiveApp]:
    """The real web app on loopback, with a real store and (given a handler) workers."""
    store = connect(db)
    metrics = Metrics()
    worker = None
    if handler is not None:
        worker = Worker(store, handler, concurrency=2, max_attempts=max_attempts,
                        backoff=backoff or (lambda attempt: 0.0), metrics=metrics,
                        poll_interval=0.05, clock=clock)
    app = build_web_app(secret, store, worker, metrics, clock=clock,
                        debounce_seconds=debounce, **app_kwargs)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    if worker is not None:
        await worker.start()
    session = aiohttp.ClientSession()
    try:
        yield LiveApp(store, metrics, worker, server, session)
    finally:
        await session.close()
        if worker is not None:
            await worker.stop()
        await server.close()
        store.close()
