"""Several workers ("replicas", each with its own connection) on one real PostgreSQL
queue: one review of a PR at a time, takeover of a dead replica's claim, drain."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

from bot.app.queue import Worker
from bot.store import Delivery, PostgresStore, SqlStore, open_store
from tests.app.helpers import wait_until

LEASE = 0.6  # short, so a dead replica's claim frees up within the test
# Where no replica dies, a lease must outlive the heartbeat on a starved machine: at 0.6 s a
# load of 13 on 2 cores delayed renewal past expiry and a live claim was taken over.
LIVE_LEASE = 30.0


def pr_body(number: int, head: str) -> bytes:
    return json.dumps({
        "action": "synchronize", "number": number,
        "pull_request": {"number": number, "head": {"sha": head}},
        "repository": {"full_name": "o/r"},
    }).encode()


def queue(store: SqlStore, delivery_id: str, number: int, at: float) -> None:
    store.add_delivery(delivery_id, "pull_request", "synchronize", pr_body(number, delivery_id),
                       at, at, None)


def worker(store: SqlStore, handler: Callable[[Delivery, object], object]) -> Worker:
    return Worker(store, handler, concurrency=2, max_attempts=5,  # type: ignore[arg-type]
                  backoff=lambda attempt: 0.0, poll_interval=0.02)


def replicas(url: str, n: int, lease: float = LEASE) -> list[SqlStore]:
    stores = [open_store(url, lease_seconds=lease) for _ in range(n)]
    assert all(isinstance(s, PostgresStore) and s.shared for s in stores)
    return stores


def test_two_replicas_never_review_one_pull_request_at_the_same_time(pg_url: str) -> None:
    a, b = replicas(pg_url, 2, lease=LIVE_LEASE)
    running: dict[int, int] = {}
    overlap: list[int] = []
    handled: list[str] = []

    async def handler(d: Delivery, payload: object) -> None:
        number = int(d.json()["number"])
        running[number] = running.get(number, 0) + 1
        if running[number] > 1:
            overlap.append(number)
        await asyncio.sleep(0.05)
        running[number] -= 1
        handled.append(d.id)

    async def scenario() -> None:
        for i in range(12):  # 12 deliveries over 3 PRs, all due at once
            queue(a, f"d{i}", number=1 + i % 3, at=1.0 + i)
        workers = [worker(a, handler), worker(b, handler)]
        for w in workers:
            await w.start()
        await wait_until(lambda: a.counts()["done"] == 12)
        for w in workers:
            await w.stop()

    asyncio.run(scenario())
    assert overlap == []  # four workers, three PRs: never two on one PR
    assert sorted(handled) == sorted(f"d{i}" for i in range(12))
    assert a.counts()["pending"] == 0 and a.counts()["dead"] == 0
    for s in (a, b):
        s.close()


def test_a_dead_replicas_delivery_is_finished_by_another_once_its_lease_expires(
    pg_url: str,
) -> None:
    dead, alive = replicas(pg_url, 2)
    queue(dead, "orphan", number=5, at=1.0)
    claimed = dead.claim(now=time.time())
    assert claimed is not None and claimed.id == "orphan"
    assert dead.lease_pr("o/r", 5, "orphan", now=time.time())
    dead.db.raw.close()  # the replica dies: no renewal, no release
    seen: list[int] = []

    async def handler(d: Delivery, payload: object) -> None:
        seen.append(d.attempts)

    async def scenario() -> None:
        w = worker(alive, handler)
        await w.start()  # a shared store: start-up takes back nothing that may be alive
        assert alive.get_delivery("orphan").status == "running"  # type: ignore[union-attr]
        await wait_until(lambda: alive.counts()["done"] == 1)
        await w.stop()

    asyncio.run(scenario())
    assert seen == [2]  # taken over once, the crash counted as an attempt
    alive.close()


def test_drain_hands_back_an_unfinished_delivery_uncounted_for_another_replica(
    pg_url: str,
) -> None:
    a, b = replicas(pg_url, 2)
    started = asyncio.Event()
    attempts: list[int] = []

    async def stuck(d: Delivery, payload: object) -> None:
        attempts.append(d.attempts)
        started.set()
        await asyncio.Event().wait()

    async def quick(d: Delivery, payload: object) -> None:
        attempts.append(d.attempts)

    async def scenario() -> None:
        queue(a, "long", number=9, at=1.0)
        first = worker(a, stuck)
        await first.start()
        await started.wait()
        assert first.draining is False
        await first.stop(timeout=0)  # SIGTERM with a review still running
        assert first.draining is True
        d = b.get_delivery("long")
        assert d is not None and d.status == "pending" and d.attempts == 0
        second = worker(b, quick)
        await second.start()
        await wait_until(lambda: b.counts()["done"] == 1)
        await second.stop()

    asyncio.run(scenario())
    assert attempts == [1, 1]  # the drained claim did not count
    assert b.get_pr_state("o/r", 9) is None
    rows = b.db.execute("SELECT COUNT(*) FROM pr_leases").fetchone()
    assert rows[0] == 0  # the PR lease went with the delivery
    for s in (a, b):
        s.close()
