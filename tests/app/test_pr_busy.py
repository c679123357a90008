"""Many deliveries queued behind one busy pull request, on both stores: each is handed back
until the PR's lease runs out instead of once a second, the delivery that frees the PR wakes
the next one, and every delivery is handled exactly once, oldest first. Time is a fake clock
and claims are counted (the `deferred` outcome), so nothing here depends on speed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bot.app.metrics import Metrics
from bot.app.queue import Worker
from bot.store import Delivery, SqlStore, connect
from bot.store.pr_tables import pr_waiting_note
from tests.app.helpers import FakeClock, payload_bytes

BODY = payload_bytes("issue_comment.created")
PR = (json.loads(BODY)["repository"]["full_name"], json.loads(BODY)["issue"]["number"])
QUEUED = 120


def _deferred(metrics: Metrics) -> float:
    for line in metrics.render().decode().splitlines():
        if line.startswith("ci_stability_deliveries_processed_total") and "deferred" in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _queue(store: SqlStore, clock: FakeClock) -> list[str]:
    ids = [f"c{i:03d}" for i in range(QUEUED)]
    for i, delivery_id in enumerate(ids):
        at = clock.now - QUEUED + i  # received in this order, all due now
        store.add_delivery(delivery_id, "issue_comment", "created", BODY, at, at, None)
    return ids


async def _drain(worker: Worker) -> int:
    claimed = 0
    while await worker.run_once():
        claimed += 1
    return claimed


def test_waiters_sleep_until_the_holder_frees_the_pr_then_go_one_by_one(
        store: SqlStore) -> None:
    clock, metrics, handled = FakeClock(), Metrics(), []
    release = asyncio.Event()

    async def handler(d: Delivery, payload: object) -> None:
        handled.append(d.id)
        if d.id == "c000":
            await release.wait()  # the first holds the PR while the others queue up

    async def scenario() -> None:
        ids = _queue(store, clock)
        worker = Worker(store, handler, metrics=metrics, clock=clock)
        holder = asyncio.create_task(worker.run_once())
        while not handled:
            await asyncio.sleep(0)
        assert await _drain(worker) == QUEUED - 1  # each waiter claimed once, handed back
        assert _deferred(metrics) == QUEUED - 1
        for _ in range(int(store.lease_seconds) - 2):  # a simulated second at a time
            clock.now += 1.0
            assert await _drain(worker) == 0  # asleep: the 1 s retry claimed them all again
        release.set()
        assert await holder
        # The holder woke the oldest waiter; each then wakes the next as it finishes.
        assert await _drain(worker) == QUEUED - 1
        assert handled == ids
        assert _deferred(metrics) == QUEUED - 1  # no further hand-back

    asyncio.run(scenario())
    assert store.counts()["done"] == QUEUED and store.counts()["pending"] == 0


def test_a_holder_that_died_frees_its_waiters_when_its_lease_runs_out(
        store: SqlStore) -> None:
    clock, metrics, handled = FakeClock(), Metrics(), []

    async def handler(d: Delivery, payload: object) -> None:
        handled.append(d.id)

    async def scenario() -> None:
        ids = _queue(store, clock)
        # Another replica's delivery holds the PR and never finishes (its process died).
        assert store.lease_pr(*PR, "gone", clock.now)
        worker = Worker(store, handler, metrics=metrics, clock=clock)
        assert await _drain(worker) == QUEUED
        assert _deferred(metrics) == QUEUED and handled == []
        clock.now += store.lease_seconds - 1
        assert await _drain(worker) == 0  # still within the dead holder's lease
        clock.now += 2
        assert await _drain(worker) == QUEUED  # the lease ran out: each handled once
        assert handled == ids and _deferred(metrics) == QUEUED

    asyncio.run(scenario())
    assert store.counts()["done"] == QUEUED


def test_a_woken_push_that_is_superseded_passes_the_turn_to_the_newer_push(
        store: SqlStore) -> None:
    clock, handled = FakeClock(), []
    push = json.loads(payload_bytes("pull_request.synchronize"))
    push["repository"]["full_name"], push["number"] = PR
    body = json.dumps(push).encode()
    group = f"{PR[0]}#{PR[1]}"

    async def handler(d: Delivery, payload: object) -> None:
        handled.append(d.id)

    async def scenario() -> None:
        assert store.lease_pr(*PR, "reviewing", clock.now)
        worker = Worker(store, handler, clock=clock)
        for delivery_id, at in (("push-1", clock.now - 2), ("push-2", clock.now - 1)):
            store.add_delivery(delivery_id, "pull_request", "synchronize", body, at, at, group)
            assert await _drain(worker) == 1  # handed back behind the review
        store.release_pr(*PR, "reviewing")  # what the reviewing worker does as it ends
        assert store.wake_pr_waiter(*PR, clock.now)
        # push-1 is woken, superseded by push-2, and wakes push-2: no lease to wait out.
        assert await _drain(worker) == 2
        assert handled == ["push-2"]

    asyncio.run(scenario())
    assert store.counts()["superseded"] == 1 and store.counts()["done"] == 1


def test_a_woken_waiter_is_the_oldest_of_its_pr_only(store: SqlStore) -> None:
    clock = FakeClock()
    notes = {"old": pr_waiting_note(*PR), "newer": pr_waiting_note(*PR),
             "other": pr_waiting_note("o/other", 1)}
    for at, delivery_id in enumerate(notes):
        store.add_delivery(delivery_id, "issue_comment", "created", BODY, at, at, None)
    for _ in notes:
        claimed = store.claim(clock.now)
        assert claimed is not None
        store.release(claimed.id, clock.now + 60, notes[claimed.id])
    assert store.wake_pr_waiter(*PR, clock.now) is True
    woken = store.claim(clock.now)
    assert woken is not None and woken.id == "old" and store.claim(clock.now) is None
    store.complete("old")
    assert store.wake_pr_waiter(*PR, clock.now) is True
    woken = store.claim(clock.now)
    assert woken is not None and woken.id == "newer"
    assert store.wake_pr_waiter(*PR, clock.now) is False  # "other" waits for another PR
    assert store.claim(clock.now) is None


def test_a_restarted_single_process_store_wakes_the_waiters_of_the_dead_holder(
        tmp_path: Path) -> None:
    """SQLite, one `serve` per file: at start the dead process's PR leases are dropped,
    so its waiters must not sleep out a lease nobody holds any more. (PostgreSQL
    replicas never drop leases at start: there the lease expiry frees them, tested above.)"""
    store = connect(tmp_path / "bot.db")
    assert not store.shared
    clock = FakeClock()
    handled: list[str] = []
    ids = _queue(store, clock)
    assert store.lease_pr(*PR, "dead-process", clock.now)
    worker = Worker(store, lambda d, payload: _record(handled, d), clock=clock)
    assert asyncio.run(_drain(worker)) == QUEUED and handled == []  # asleep behind it
    assert store.requeue_running() == 0  # what a restarted `serve` runs at start
    assert asyncio.run(_drain(worker)) == QUEUED  # no lease waited out
    assert handled == ids
    store.close()


async def _record(handled: list[str], d: Delivery) -> None:
    handled.append(d.id)
