"""`ci-stability replay PAYLOAD.json --event NAME`: one delivery through the App pipeline.

For debugging against any GITHUB_API_URL (a GitHub Enterprise Server, a test server):
the payload is queued in the App's store like a verified webhook, claimed, and run by
the same handler `serve` uses, in the foreground, with the outcome printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from bot.app.compose import build_handler
from bot.app.metrics import Metrics
from bot.app.settings import Settings, SettingsError
from bot.errors import PermanentError, RetryableError
from bot.store import open_store


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ci-stability replay", description=__doc__)
    parser.add_argument("payload", help="webhook payload JSON (the request body GitHub sent)")
    parser.add_argument("--event", required=True, help="the X-GitHub-Event, e.g. pull_request")
    parser.add_argument("--delivery", help="delivery id (default: a new one)")
    return parser


async def _replay(settings: Settings, event: str, body: bytes, delivery_id: str) -> str:
    payload = json.loads(body)
    if not isinstance(payload, dict):
        return f"the payload is a JSON {type(payload).__name__}, not an object; nothing done"
    store = open_store(settings.db_path, settings.lease_seconds)
    handler = build_handler(settings, store, Metrics())
    try:
        now = time.time()
        action = payload.get("action")
        if not store.add_delivery(delivery_id, event, action, body, now, now, None):
            return f"delivery {delivery_id} was already stored; nothing done"
        delivery = store.get_delivery(delivery_id)
        assert delivery is not None
        try:
            await handler(delivery, payload)
        except (RetryableError, PermanentError) as exc:
            store.fail(delivery_id, str(exc), None)
            raise
        store.complete(delivery_id)
        return f"delivery {delivery_id} ({event}/{action}) handled"
    finally:
        await handler.aclose()
        store.close()


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        body = Path(args.payload).read_bytes()
        json.loads(body)
    except OSError as exc:
        sys.stderr.write(f"ci-stability replay: {args.payload}: {exc.strerror}\n")
        return 2
    except ValueError as exc:
        sys.stderr.write(f"ci-stability replay: {args.payload}: not valid JSON ({exc})\n")
        return 2
    try:
        settings = Settings.from_env(os.environ)
    except SettingsError as exc:
        sys.stderr.write(f"ci-stability replay: {exc}\n")
        return 2
    delivery_id = args.delivery or f"replay-{uuid.uuid4()}"
    try:
        print(asyncio.run(_replay(settings, args.event, body, delivery_id)))
    except (RetryableError, PermanentError) as exc:
        sys.stderr.write(f"ci-stability replay: the delivery failed: {exc}\n")
        return 1
    return 0
