"""Run a FakeGitHub on its own event loop thread, for synchronous clients (PyGithub)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .server import FakeGitHub

_START_TIMEOUT_SECONDS = 10


@contextmanager
def running_fake_github(fake: FakeGitHub | None = None, **options: Any) -> Iterator[FakeGitHub]:
    """`with running_fake_github() as gh: Github(base_url=gh.url, ...)`.

    The server lives on a private loop in a daemon thread, so a blocking client in the
    test thread cannot starve it. Seed state before or between calls.
    """
    fake = fake or FakeGitHub(**options)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fake-github", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(fake.start(), loop).result(_START_TIMEOUT_SECONDS)
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.close(), loop).result(_START_TIMEOUT_SECONDS)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_START_TIMEOUT_SECONDS)
        loop.close()
