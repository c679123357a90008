"""`ci-stability serve` with a scripted handler, run as a subprocess by test_serve.py.

SERVE_TEST_MODE=block: the handler records "start <id>" and then hangs, so the test
can kill -9 the process mid-delivery. SERVE_TEST_MODE=finish: it records
"start <id>" and "finish <id>" and returns. Records go to SERVE_TEST_JOURNAL,
flushed and fsynced so a kill cannot lose them.
"""

from __future__ import annotations

import asyncio
import os
import sys

from bot.app.metrics import Metrics
from bot.app.queue import Handler
from bot.app.settings import Settings
from bot.cli.serve import main
from bot.store import Delivery, Store


def record(line: str) -> None:
    with open(os.environ["SERVE_TEST_JOURNAL"], "a") as journal:
        journal.write(line + "\n")
        journal.flush()
        os.fsync(journal.fileno())


def build_handler(settings: Settings, store: Store, metrics: Metrics) -> Handler:
    mode = os.environ["SERVE_TEST_MODE"]

    async def handle(delivery: Delivery, payload: object) -> None:
        record(f"start {delivery.id} {delivery.attempts}")
        if mode == "block":
            await asyncio.Event().wait()
        record(f"finish {delivery.id}")

    return handle


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], handler_factory=build_handler))
