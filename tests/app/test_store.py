"""Both stores, SQLite on a real file and the machine's real PostgreSQL: the delivery
queue, leases, migrations, PR state, waivers, commands. Every test taking `store` or
`open_db` runs once per backend."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.store import (
    DB_ERRORS,
    MIGRATIONS,
    GroupCommitter,
    NewDelivery,
    SqlStore,
    StoreError,
    apply_migrations,
    connect,
    open_store,
    schema_version,
)
from tests.app.helpers import payload_bytes

BODY = payload_bytes("pull_request.synchronize")


OpenDb = Callable[[], SqlStore]


@pytest.fixture(params=["sqlite", "postgresql"])
def open_db(request: pytest.FixtureRequest, tmp_path: Path) -> OpenDb:
    """Opens another connection to one fresh database of the backend under test."""
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_url")
        return lambda: open_store(url)
    return lambda: connect(tmp_path / "store.db")


@pytest.fixture
def store(open_db: OpenDb) -> Iterator[SqlStore]:
    s = open_db()
    yield s
    s.close()


def add(store: SqlStore, delivery_id: str, at: float = 100.0, not_before: float | None = None,
        group_key: str | None = None, payload: bytes = BODY) -> bool:
    return store.add_delivery(delivery_id, "pull_request", "synchronize", payload, at,
                              at if not_before is None else not_before, group_key)


def test_a_new_database_is_migrated_to_the_latest_schema_in_wal_mode(tmp_path: Path) -> None:
    store = connect(tmp_path / "new.db")
    store.close()
    conn = sqlite3.connect(tmp_path / "new.db")
    assert schema_version(conn) == len(MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    connect(tmp_path / "new.db").close()  # reopening applies nothing twice


def test_adding_a_migration_is_appending_to_the_list(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    extra = [*MIGRATIONS, ("CREATE TABLE ci_failures (id INTEGER PRIMARY KEY, job TEXT)",)]
    assert apply_migrations(conn) == len(MIGRATIONS)
    assert apply_migrations(conn, extra) == len(MIGRATIONS) + 1
    conn.execute("INSERT INTO ci_failures (job) VALUES ('gpu-test')")
    conn.close()


def test_a_failed_migration_leaves_the_previous_version(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    broken = [*MIGRATIONS, ("CREATE TABLE fine (x)", "THIS IS NOT SQL")]
    with pytest.raises(sqlite3.Error):
        apply_migrations(conn, broken)
    assert schema_version(conn) == len(MIGRATIONS)
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'fine'").fetchone() is None


def test_a_database_from_a_newer_version_is_refused_clearly(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "future.db")
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(StoreError, match="newer than this program knows"):
        connect(tmp_path / "future.db")


def test_an_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open the database"):
        connect(tmp_path / "no-such-dir" / "x.db")


def test_a_delivery_id_is_stored_once_and_its_payload_round_trips(store: SqlStore) -> None:
    assert add(store, "d1") is True
    assert add(store, "d1") is False
    assert store.add_delivery("small", "ping", None, b"{}", 1.0, 1.0, None)
    d = store.get_delivery("d1")
    assert d is not None and d.payload == BODY and d.json()["action"] == "synchronize"
    assert d.status == "pending" and d.attempts == 0
    assert store.get_delivery("small").payload == b"{}"  # type: ignore[union-attr]
    assert store.counts()["pending"] == 2


def test_a_batch_of_new_ids_with_one_already_stored_is_refused_for_that_one_only(
    store: SqlStore,
) -> None:
    # PostgreSQL writes a batch of distinct ids with COPY, which has no ON CONFLICT: a
    # known id among them must send the batch the conflict-aware way, losing nothing.
    add(store, "old")
    batch = [NewDelivery(i, "pull_request", "opened", BODY, 1.0, 1.0) for i in ("c", "old", "d")]
    assert store.add_deliveries(batch) == [True, False, True]
    assert store.add_deliveries(batch[:1]) == [False]
    assert store.counts()["pending"] == 3
    assert store.get_delivery("d").payload == BODY  # type: ignore[union-attr]


def test_rows_compressed_with_zlib_by_earlier_versions_still_read(store: SqlStore) -> None:
    store.db.execute(
        "INSERT INTO deliveries (id, event, payload, payload_encoding, received_at,"
        " not_before, updated_at) VALUES (?, 'ping', ?, 'zlib', 1.0, 1.0, 1.0)",
        ("legacy", zlib.compress(BODY, 1)))
    assert store.get_delivery("legacy").payload == BODY  # type: ignore[union-attr]


def test_a_batch_reports_duplicates_per_row(store: SqlStore) -> None:
    add(store, "old")
    batch = [NewDelivery(i, "pull_request", "opened", b"{}", 1.0, 1.0) for i in
             ("a", "old", "b", "a")]
    assert store.add_deliveries(batch) == [True, False, True, False]


def test_claim_takes_due_deliveries_oldest_first(store: SqlStore) -> None:
    add(store, "later", at=100.0, not_before=200.0)
    add(store, "first", at=101.0)
    add(store, "second", at=102.0)
    claimed = store.claim(now=150.0)
    assert claimed is not None and claimed.id == "first"
    assert claimed.status == "running" and claimed.attempts == 1
    assert store.claim(now=150.0).id == "second"  # type: ignore[union-attr]
    assert store.claim(now=150.0) is None
    assert store.next_due() == 200.0
    assert store.claim(now=200.0).id == "later"  # type: ignore[union-attr]
    assert store.counts() == {"pending": 0, "running": 3, "done": 0, "dead": 0,
                              "superseded": 0}


def test_concurrent_claims_from_several_connections_never_share_a_delivery(
    open_db: OpenDb,
) -> None:
    seed = open_db()
    for i in range(60):
        add(seed, f"d{i}", payload=b"{}")
    stores = [open_db() for _ in range(4)]
    claimed: list[str] = []
    lock = threading.Lock()

    def drain(s: SqlStore) -> None:
        while (d := s.claim(now=1e12)) is not None:
            with lock:
                claimed.append(d.id)

    threads = [threading.Thread(target=drain, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == sorted(f"d{i}" for i in range(60))
    for s in [seed, *stores]:
        s.close()


def test_complete_fail_retry_dead_letter_and_supersede(store: SqlStore) -> None:
    for name in ("ok", "retry", "dead", "old"):
        add(store, name)
    for _ in range(4):
        store.claim(now=1000.0)
    store.complete("ok")
    store.fail("retry", "HTTP 502 from GitHub", retry_at=5000.0)
    store.fail("dead", "x" * 10_000, retry_at=None)
    store.supersede("old")
    assert store.counts() == {"pending": 1, "running": 0, "done": 1, "dead": 1,
                              "superseded": 1}
    retry = store.get_delivery("retry")
    assert retry is not None and retry.not_before == 5000.0
    assert retry.last_error == "HTTP 502 from GitHub"
    assert store.claim(now=4999.0) is None
    again = store.claim(now=5000.0)
    assert again is not None and again.id == "retry" and again.attempts == 2
    assert len(store.get_delivery("dead").last_error or "") == 2000  # type: ignore[union-attr]


def test_requeue_running_recovers_after_a_crash(store: SqlStore) -> None:
    add(store, "a")
    add(store, "b", at=101.0)
    store.claim(now=1000.0)
    assert store.requeue_running() == 1
    assert store.counts()["pending"] == 2
    again = store.claim(now=1000.0)
    assert again is not None and again.id == "a" and again.attempts == 2  # the crash counts


def test_has_newer_pending_sees_later_live_deliveries_of_the_group(store: SqlStore) -> None:
    add(store, "s1", at=1.0, group_key="o/r#7")
    add(store, "s2", at=2.0, group_key="o/r#7")
    add(store, "other", at=3.0, group_key="o/r#8")
    assert store.has_newer_pending("o/r#7", 1.0) is True
    assert store.has_newer_pending("o/r#7", 2.0) is False
    store.supersede("s2")
    assert store.has_newer_pending("o/r#7", 1.0) is False
    add(store, "s3", at=4.0, group_key="o/r#7")
    store.claim(now=1e9)
    store.claim(now=1e9)
    store.claim(now=1e9)
    store.complete("s3")  # a newer head already reviewed: an old retry must not run
    assert store.has_newer_pending("o/r#7", 1.0) is True


def test_prune_drops_only_finished_deliveries(store: SqlStore) -> None:
    add(store, "done")
    add(store, "pending")
    store.claim(now=1e9)
    store.complete("done")
    assert store.prune(before=0.0) == 0
    assert store.prune(before=1e12) == 1
    assert store.get_delivery("pending") is not None


def test_pr_state_is_a_json_blob_per_pull_request(store: SqlStore) -> None:
    assert store.get_pr_state("o/r", 1) is None
    store.put_pr_state("o/r", 1, {"head_sha": "abc", "fingerprints": ["f1"]})
    store.put_pr_state("o/r", 1, {"head_sha": "def", "fingerprints": ["f1", "f2"]})
    store.put_pr_state("o/r", 2, {"head_sha": "zzz"})
    assert store.get_pr_state("o/r", 1) == {"head_sha": "def", "fingerprints": ["f1", "f2"]}


def test_waivers_are_recorded_listed_and_removed(store: SqlStore) -> None:
    store.add_waiver("o/r", 1, "eval-threshold", None, "known flaky", "alice", 10.0)
    store.add_waiver("o/r", 1, "cpu-test-gpu", "tests/cpu/a.py", "tracked in #9", "bob", 11.0)
    store.add_waiver("o/r", 2, "eval-threshold", None, "other PR", "carol", 12.0)
    rows = store.list_waivers("o/r", 1)
    assert [(w.rule, w.path, w.reason, w.by, w.at) for w in rows] == [
        ("eval-threshold", None, "known flaky", "alice", 10.0),
        ("cpu-test-gpu", "tests/cpu/a.py", "tracked in #9", "bob", 11.0),
    ]
    assert store.remove_waivers("o/r", 1, "eval-threshold") == 1
    assert store.remove_waivers("o/r", 1, "eval-threshold") == 0
    assert [w.rule for w in store.list_waivers("o/r", 1)] == ["cpu-test-gpu"]
    assert len(store.list_waivers("o/r", 2)) == 1
    # Every PR's, newest first: what the dashboard lists.
    assert [(w.number, w.by) for w in store.current_waivers()] == [(2, "carol"), (1, "bob")]
    assert [w.by for w in store.current_waivers(limit=1)] == ["carol"]


def test_a_comment_is_handled_once(store: SqlStore) -> None:
    assert store.mark_comment_handled(42) is True
    assert store.mark_comment_handled(42) is False
    assert store.mark_comment_handled(43) is True


def test_command_rate_limit_is_a_sliding_window_per_user(store: SqlStore) -> None:
    assert [store.allow_command("alice", t, limit=2, window_s=60) for t in (0, 1, 2)] == [
        True, True, False]
    assert store.allow_command("bob", 2, limit=2, window_s=60) is True
    assert store.allow_command("alice", 60.5, limit=2, window_s=60) is True


def test_ping_reports_an_unreachable_store(open_db: OpenDb) -> None:
    store = open_db()
    assert store.ping() is True
    store.close()
    assert store.ping() is False


def test_the_shared_connection_is_available_to_modules_with_their_own_tables(
    tmp_path: Path,
) -> None:
    store = connect(tmp_path / "own.db")
    with store.writing() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS scratch (x)")
        conn.execute("INSERT INTO scratch VALUES (1)")
    with pytest.raises(RuntimeError), store.writing() as conn:
        conn.execute("INSERT INTO scratch VALUES (2)")
        raise RuntimeError("rolled back")
    with store.reading() as conn:
        assert conn.execute("SELECT x FROM scratch").fetchall() == [(1,)]


def test_group_commit_batches_concurrent_inserts(open_db: OpenDb) -> None:
    store = open_db()
    committer = GroupCommitter(store)

    async def scenario() -> list[bool]:
        jobs = [committer.add(NewDelivery(f"d{i % 50}", "pull_request", "opened", BODY, 1.0,
                                          1.0)) for i in range(100)]
        return await asyncio.gather(*jobs)

    results = asyncio.run(scenario())
    committer.close()
    assert results[:50] == [True] * 50 and results[50:] == [False] * 50
    assert committer.rows == 100 and committer.batches < 100
    assert store.counts()["pending"] == 50
    store.close()


def test_group_commit_takes_a_delivery_added_as_the_previous_batch_resolves(
    open_db: OpenDb,
) -> None:
    # Each add() awaits the one before: it runs in the loop step right after its
    # predecessor's batch committed, while that batch's writer is still winding down.
    # It must still find a writer (it once waited forever: the slot was freed a step
    # later). The timeout only turns such a hang into a failure.
    store = open_db()
    committer = GroupCommitter(store)

    async def in_turn() -> list[bool]:
        return [await committer.add(NewDelivery(f"seq{i}", "pull_request", "opened", BODY,
                                                1.0, 1.0)) for i in range(5)]

    async def scenario() -> list[bool]:
        return await asyncio.wait_for(in_turn(), 60)

    assert asyncio.run(scenario()) == [True] * 5
    assert committer.batches == 5 and store.counts()["pending"] == 5
    store.close()


def test_group_commit_fails_every_waiter_when_the_store_fails(open_db: OpenDb) -> None:
    store = open_db()
    store.close()
    committer = GroupCommitter(store)

    async def scenario() -> list[object]:
        jobs = [committer.add(NewDelivery(f"d{i}", "e", None, b"{}", 1.0, 1.0))
                for i in range(3)]
        return await asyncio.gather(*jobs, return_exceptions=True)

    assert all(isinstance(r, DB_ERRORS) for r in asyncio.run(scenario()))


# --- leases: several replicas on one queue -------------------------------------------


def test_a_dead_replicas_claim_is_taken_over_once_its_lease_runs_out(open_db: OpenDb) -> None:
    alive, dead = open_db(), open_db()
    add(dead, "d1")
    claimed = dead.claim(now=1000.0)
    assert claimed is not None and claimed.attempts == 1
    # Within the lease the row is the dead replica's; after it, anyone's.
    assert alive.claim(now=1000.0 + dead.lease_seconds - 1) is None
    again = alive.claim(now=1000.0 + dead.lease_seconds + 1)
    assert again is not None and again.id == "d1" and again.attempts == 2  # the crash counts
    # The first replica comes back (a long pause, not a death): it is fenced off.
    dead.complete("d1")
    dead.fail("d1", "late", retry_at=None)
    assert alive.get_delivery("d1").status == "running"  # type: ignore[union-attr]
    alive.complete("d1")
    assert alive.get_delivery("d1").status == "done"  # type: ignore[union-attr]
    for s in (alive, dead):
        s.close()


def test_renewing_keeps_a_claim_and_its_pr_lease(open_db: OpenDb) -> None:
    mine, other = open_db(), open_db()
    add(mine, "d1")
    add(mine, "d2", at=101.0)
    assert mine.claim(now=1000.0) is not None
    assert mine.lease_pr("o/r", 7, "d1", now=1000.0)
    late = 1000.0 + mine.lease_seconds - 1
    assert mine.renew(["d1"], now=late, with_pr={"d1"}) == {"d1"}
    expired = 1000.0 + mine.lease_seconds + 1
    taken = other.claim(now=expired)
    assert taken is not None and taken.id == "d2"  # d1 was renewed, so d2 is next
    assert other.lease_pr("o/r", 7, "d2", now=expired) is False  # renewed with d1
    assert other.renew(["d1"], now=expired) == set()  # not other's to renew
    mine.release_pr("o/r", 7, "d1")
    assert other.lease_pr("o/r", 7, "d2", now=expired) is True
    for s in (mine, other):
        s.close()


def test_a_pr_lease_is_one_holder_at_a_time_until_released_or_expired(store: SqlStore) -> None:
    assert store.lease_pr("o/r", 7, "a", now=0.0) is True
    assert store.lease_pr("o/r", 7, "a", now=1.0) is True  # its own: renewed
    assert store.lease_pr("o/r", 7, "b", now=1.0) is False
    assert store.lease_pr("o/r", 8, "b", now=1.0) is True  # another PR
    assert store.lease_pr("o/r", 7, "b", now=1.0 + store.lease_seconds + 1) is True
    store.release_pr("o/r", 7, "a")  # no longer a's: releases nothing
    assert store.lease_pr("o/r", 7, "c", now=2.0 + store.lease_seconds) is False


def test_release_hands_a_delivery_back_without_counting_the_claim(store: SqlStore) -> None:
    add(store, "busy")
    d = store.claim(now=1000.0)
    assert d is not None and d.attempts == 1
    store.release("busy", retry_at=1005.0, note="the pull request is being reviewed")
    assert store.claim(now=1004.0) is None
    again = store.claim(now=1005.0)
    assert again is not None and again.attempts == 1
    assert again.last_error == "the pull request is being reviewed"


def test_concurrent_pr_leases_from_several_connections_have_one_winner(
    open_db: OpenDb,
) -> None:
    stores = [open_db() for _ in range(4)]
    wins: list[str] = []
    barrier = threading.Barrier(len(stores))

    def take(s: SqlStore, name: str) -> None:
        barrier.wait()
        if s.lease_pr("o/r", 1, name, now=10.0):
            wins.append(name)

    threads = [threading.Thread(target=take, args=(s, f"d{i}")) for i, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    for s in stores:
        s.close()


# --- PostgreSQL specifics --------------------------------------------------------------


def test_postgres_migrations_are_recorded_in_a_version_table(pg_url: str) -> None:
    from bot.store import PG_MIGRATIONS, pg_schema_version

    stores = [open_store(pg_url) for _ in range(3)]  # replicas starting together
    assert pg_schema_version(stores[0].db) == len(PG_MIGRATIONS)
    rows = stores[0].db.execute("SELECT version FROM schema_migrations").fetchall()
    assert [r[0] for r in rows] == list(range(1, len(PG_MIGRATIONS) + 1))
    stores[0].db.execute("INSERT INTO schema_migrations VALUES (?, 0)",
                         (len(PG_MIGRATIONS) + 5,))
    with pytest.raises(StoreError, match="newer than this program knows"):
        open_store(pg_url)
    stores[0].db.execute("DELETE FROM schema_migrations WHERE version > ?",
                         (len(PG_MIGRATIONS),))
    for s in stores:
        s.close()


def test_an_unreachable_postgres_is_a_store_error_without_the_password() -> None:
    with pytest.raises(StoreError, match="cannot open the database") as caught:
        open_store("postgresql://bot:hunter2@127.0.0.1:1/nowhere")
    assert "hunter2" not in str(caught.value)


def test_a_delivery_queued_elsewhere_wakes_a_listening_replica(pg_url: str) -> None:
    listener, writer = open_store(pg_url), open_store(pg_url)
    woken = threading.Event()
    listener.listen(woken.set)
    # The LISTEN connection may not be up yet: keep queuing until one wake-up lands.
    for i in range(200):
        add(writer, f"n{i}")
        if woken.wait(0.05):
            break
    assert woken.is_set()
    woken.clear()
    add(listener, "own")  # a replica's own deliveries do not wake it through the database
    assert not woken.wait(0.3)
    for s in (listener, writer):
        s.close()
