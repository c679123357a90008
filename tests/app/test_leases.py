"""A claim whose lease ran out before it was renewed (the replica was stalled) is
never revived and never published for, on both backends: the store's `renew` and
journal fence, then the worker giving the claim up and cancelling its handler while a
second replica finishes the delivery."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.app.claims import ensure_held
from bot.app.queue import Worker
from bot.errors import LeaseLost
from bot.store import Delivery, SqlStore, connect, open_store
from tests.app.helpers import wait_until

LEASE = 0.3
OpenDb = Callable[[], SqlStore]


@pytest.fixture(params=["sqlite", "postgresql"])
def open_db(request: pytest.FixtureRequest, tmp_path: Path) -> OpenDb:
    """Another connection (another replica) on one fresh database of the backend."""
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_url")
        return lambda: open_store(url, lease_seconds=LEASE)
    return lambda: connect(tmp_path / "store.db", lease_seconds=LEASE)


@pytest.fixture
def two(open_db: OpenDb) -> Iterator[tuple[SqlStore, SqlStore]]:
    a, b = open_db(), open_db()
    yield a, b
    a.close()
    b.close()


def add(store: SqlStore, delivery_id: str, number: int = 7) -> None:
    body = (b'{"action":"synchronize","number":%d,"pull_request":{"number":%d},'
            b'"repository":{"full_name":"o/r"}}' % (number, number))
    store.add_delivery(delivery_id, "pull_request", "synchronize", body, 1.0, 1.0, None)


def test_renew_extends_only_leases_still_valid_and_names_the_ones_kept(
    two: tuple[SqlStore, SqlStore],
) -> None:
    mine, _ = two
    for i in ("d1", "d2", "d3"):
        add(mine, i, number=int(i[1]))
    t = 1000.0
    assert {mine.claim(t).id, mine.claim(t).id} == {"d1", "d2"}  # type: ignore[union-attr]
    assert mine.lease_pr("o/r", 1, "d1", t) and mine.lease_pr("o/r", 2, "d2", t)
    assert mine.renew(["d1", "d2"], t + LEASE / 2, with_pr={"d1", "d2"}) == {"d1", "d2"}
    # Past the renewed expiry nothing is revived, though no one else claimed it yet.
    late = t + LEASE / 2 + LEASE + 0.01
    assert mine.renew(["d1", "d2"], late, with_pr={"d1", "d2"}) == set()
    (until,) = mine.db.execute("SELECT lease_until FROM deliveries WHERE id = 'd1'").fetchone()
    assert until < late


def test_a_delivery_whose_pr_lease_ran_out_is_not_held(two: tuple[SqlStore, SqlStore]) -> None:
    mine, other = two
    add(mine, "d1")
    add(mine, "d2")
    t = 1000.0
    assert mine.claim(t).id == "d1"  # type: ignore[union-attr]
    assert mine.lease_pr("o/r", 7, "d1", t)
    # Its PR lease ran out and another delivery of the PR took it; the claim itself is
    # renewed below while still valid, but the delivery no longer holds its PR.
    assert other.lease_pr("o/r", 7, "d2", t + LEASE + 0.01)
    mine.db.execute("UPDATE deliveries SET lease_until = ? WHERE id = 'd1'", (t + 10,))
    assert mine.renew(["d1"], t + LEASE + 0.02, with_pr={"d1"}) == set()
    assert mine.renew(["d1"], t + LEASE + 0.03) == {"d1"}  # without a PR lease: held


def test_the_journal_refuses_an_intent_once_the_publishers_lease_ran_out(
    two: tuple[SqlStore, SqlStore],
) -> None:
    mine, other = two
    add(mine, "d1")
    now = time.time()
    assert mine.claim(now).id == "d1"  # type: ignore[union-attr]
    mine.journal_intend("o/r", 7, "check:h1", {"replaces": 0}, held_by="d1")
    assert set(mine.journal_entries("o/r", 7)) == {"check:h1"}
    with pytest.raises(LeaseLost):  # not this replica's delivery
        other.journal_intend("o/r", 7, "summary", {}, held_by="d1")
    mine.db.execute("UPDATE deliveries SET lease_until = ? WHERE id = 'd1'", (now - 1,))
    with pytest.raises(LeaseLost):  # its own, but the lease ran out
        mine.journal_intend("o/r", 7, "review:h1", {}, held_by="d1")
    assert set(mine.journal_entries("o/r", 7)) == {"check:h1"}  # nothing recorded


def _worker(store: SqlStore, handler: Callable[[Delivery, object], object]) -> Worker:
    return Worker(store, handler, concurrency=1, max_attempts=10,  # type: ignore[arg-type]
                  backoff=lambda attempt: 0.0, poll_interval=0.02)


@pytest.mark.parametrize("stall", ["before_publishing", "while_awaiting"])
def test_a_stalled_replica_gives_its_claim_up_and_another_finishes_it(
    two: tuple[SqlStore, SqlStore], stall: str,
) -> None:
    """Replica A blocks its event loop for several leases (a GC pause, a blocking
    call) mid-delivery; replica B, on another thread, claims the delivery once the
    lease ran out and finishes it. A must publish nothing afterwards: either its next
    publication check refuses (`before_publishing`), or the renewer, which runs first,
    cancels the handler (`while_awaiting`)."""
    a_store, b_store = two
    add(a_store, "d1")
    published: list[str] = []
    a_started = asyncio.Event()
    outcome: list[str] = []

    async def a_handler(d: Delivery, payload: object) -> None:
        a_started.set()
        await asyncio.sleep(0)
        stall_until_b_finished()
        try:
            if stall == "while_awaiting":
                await asyncio.sleep(30 * LEASE)  # the renewer wakes first: cancelled here
            ensure_held()
        except (LeaseLost, asyncio.CancelledError) as exc:
            outcome.append(type(exc).__name__)
            raise
        published.append("a")

    def stall_until_b_finished() -> None:
        async def replica_b() -> None:
            async def b_handler(d: Delivery, payload: object) -> None:
                ensure_held()
                published.append("b")
            b = _worker(b_store, b_handler)
            # Claims as its workers do (start() is not called: on SQLite it would take
            # back what is running at once, as the only `serve` of its file must).
            while b_store.counts()["done"] == 0:  # none runnable until A's lease ran out
                if not await b.run_once():  # (or handed back while A's PR lease holds)
                    await asyncio.sleep(0.02)

        # A's loop is blocked for as long as B, on a thread and loop of its own, needs:
        # several of A's leases, since B claims only once A's has run out.
        b = threading.Thread(target=asyncio.run, args=(replica_b(),))
        b.start()
        b.join()

    async def scenario() -> None:
        a = _worker(a_store, a_handler)
        await a.start()
        await a_started.wait()
        await wait_until(lambda: bool(outcome))
        await asyncio.sleep(2 * LEASE)  # time for a late publication to show
        await a.stop()

    asyncio.run(scenario())
    assert published == ["b"]
    assert outcome == ["LeaseLost" if stall == "before_publishing" else "CancelledError"]
    d = a_store.get_delivery("d1")
    assert d is not None and d.status == "done" and d.attempts == 2
