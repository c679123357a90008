"""The intake inbox (bot/store/inbox.py) on a real SQLite file and the real PostgreSQL:
rows wait there until promoted, a known id is a duplicate wherever it is, a promotion
that fails or is SIGKILLed half-way loses and doubles nothing, and two PostgreSQL
replicas promoting at once move each row once."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bot.store import MIGRATIONS, NewDelivery, SqlStore, apply_migrations, connect, open_store
from tests.app.helpers import payload_bytes

BODY = payload_bytes("pull_request.synchronize")
ROOT = Path(__file__).resolve().parents[2]


def push(delivery_id: str, at: float = 100.0, body: bytes = BODY) -> NewDelivery:
    return NewDelivery(delivery_id, "pull_request", "synchronize", body, at, at + 5.0)


def queued_ids(store: SqlStore) -> list[str]:
    return [r[0] for r in store.db.execute("SELECT id FROM deliveries ORDER BY id").fetchall()]


def inbox_ids(store: SqlStore) -> list[str]:
    return [r[0] for r in store.db.execute("SELECT id FROM inbox ORDER BY id").fetchall()]


def test_intake_rows_wait_in_the_inbox_until_promoted(store: SqlStore) -> None:
    assert store.add_to_inbox([push("p1")]) == [True]
    assert inbox_ids(store) == ["p1"] and queued_ids(store) == []
    assert store.counts()["pending"] == 1  # queued, as far as anyone reading counts knows
    assert store.promote_inbox() == 1
    assert inbox_ids(store) == [] and queued_ids(store) == ["p1"]
    row = store.db.execute("SELECT group_key, received_at, not_before FROM deliveries"
                           " WHERE id = ?", ("p1",)).fetchone()
    assert tuple(row) == ("Codertocat/Hello-World#2", 100.0, 105.0)
    d = store.get_delivery("p1")
    assert d is not None and d.payload == BODY and d.status == "pending"


def test_readers_of_the_queue_promote_first(store: SqlStore) -> None:
    store.add_to_inbox([NewDelivery("ping-1", "ping", None, b"{}", 1.0, 1.0)])
    claimed = store.claim(2.0)
    assert claimed is not None and claimed.id == "ping-1" and claimed.payload == b"{}"
    store.add_to_inbox([push("later", at=10.0)])
    assert store.next_due() == 15.0  # promoted by next_due itself: the debounce holds
    store.add_to_inbox([push("seen")])
    assert store.get_delivery("seen") is not None


def test_an_id_known_in_either_table_is_a_duplicate(store: SqlStore) -> None:
    store.add_to_inbox([push("queued")])
    store.promote_all()
    store.add_to_inbox([push("waiting")])
    # PostgreSQL: a batch of distinct ids goes by COPY; the trigger and the primary key
    # fail it, and the conflict-aware insert answers per row.
    batch = [push(i) for i in ("new-1", "queued", "waiting", "new-2", "new-1")]
    assert store.add_to_inbox(batch) == [True, False, False, True, False]
    assert store.add_to_inbox([push("queued")]) == [False]
    assert store.add_to_inbox([push("waiting")]) == [False]
    assert store.promote_all() == 3
    assert queued_ids(store) == ["new-1", "new-2", "queued", "waiting"]
    assert inbox_ids(store) == []


def test_a_push_without_a_pull_request_to_debounce_on_is_due_at_once(store: SqlStore) -> None:
    body = json.dumps({"action": "synchronize", "number": 3}).encode()  # no repository
    store.add_to_inbox([push("bare", body=body)])
    store.promote_all()
    d = store.get_delivery("bare")
    assert d is not None and d.group_key is None and d.not_before == d.received_at == 100.0


def test_a_redelivery_racing_its_own_promotion_is_dropped_not_doubled(store: SqlStore) -> None:
    # The state that race leaves (an id in both tables, possible on PostgreSQL between
    # a promotion's commit and an insert's trigger): promotion keeps the queued copy.
    store.add_delivery("both", "pull_request", "synchronize", BODY, 1.0, 1.0, "k#1")
    if store.db.postgres:  # the trigger refuses that insert; the race gets past it
        store.db.execute("ALTER TABLE inbox DISABLE TRIGGER inbox_known")
    store.db.execute("INSERT INTO inbox (id, event, action, payload, payload_encoding,"
                     " received_at, not_before) VALUES (?, 'pull_request', 'synchronize',"
                     " ?, 'identity', 9.0, 9.0)", ("both", BODY))
    if store.db.postgres:
        store.db.execute("ALTER TABLE inbox ENABLE TRIGGER inbox_known")
    assert store.promote_all() == 1
    assert queued_ids(store) == ["both"] and inbox_ids(store) == []
    assert store.get_delivery("both").received_at == 1.0  # type: ignore[union-attr]


def _fail_queue_inserts_of(store: SqlStore, delivery_id: str) -> None:
    """A real failure half-way through a promotion: the queue refuses one row."""
    if store.db.postgres:
        store.db.executescript([
            "CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            f" IF NEW.id = '{delivery_id}' THEN RAISE EXCEPTION 'refused'; END IF;"
            " RETURN NEW; END $$",
            "CREATE TRIGGER refuse BEFORE INSERT ON deliveries FOR EACH ROW"
            " EXECUTE FUNCTION refuse_row()"])
    else:
        store.db.executescript([
            "CREATE TRIGGER refuse BEFORE INSERT ON deliveries"
            f" WHEN NEW.id = '{delivery_id}' BEGIN SELECT RAISE(ABORT, 'refused'); END"])


def test_a_promotion_that_fails_half_way_leaves_the_inbox_whole(store: SqlStore) -> None:
    store.add_to_inbox([push(f"d{i}") for i in range(10)])
    _fail_queue_inserts_of(store, "d7")
    with pytest.raises(Exception, match="refused"):
        store.promote_inbox()
    assert queued_ids(store) == [] and len(inbox_ids(store)) == 10
    store.db.executescript(["DROP TRIGGER refuse" + (" ON deliveries" if store.db.postgres
                                                      else "")])
    assert store.promote_all() == 10
    assert len(queued_ids(store)) == 10 and inbox_ids(store) == []


PROMOTER = """
import sys
from bot.store import open_store
store = open_store(sys.argv[1])
print("ready", flush=True)
while store.promote_inbox(limit=int(sys.argv[2])):
    pass
print("empty", flush=True)
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_sigkill_mid_promotion_loses_and_doubles_nothing(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest,
) -> None:
    target = (request.getfixturevalue("pg_url") if backend == "postgresql"
              else str(tmp_path / "bot.db"))
    rng = random.Random(5)
    expected: set[str] = set()
    kills = trial = 0
    # Until three kills have landed mid-promotion: on a fast, quiet machine a promoter can
    # finish its batch before the kill, and that trial proves nothing about a crash.
    while kills < 3 and trial < 40:
        trial += 1
        store = open_store(target)
        batch = [push(f"t{trial}-{i}") for i in range(400)]
        expected.update(d.delivery_id for d in batch)
        assert store.add_to_inbox(batch) == [True] * len(batch)
        store.close()
        proc = subprocess.Popen([sys.executable, "-c", PROMOTER, target, "7"], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.15))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        kills += proc.returncode == -signal.SIGKILL
    assert kills >= 3  # enough kills landed while rows were still being promoted
    store = open_store(target)
    try:
        store.promote_all()
        queued = queued_ids(store)
        assert inbox_ids(store) == []
        assert len(queued) == len(set(queued)) and set(queued) == expected
    finally:
        store.close()


def test_postgresql_replicas_promoting_at_once_take_each_row_once(pg_url: str) -> None:
    one, two = open_store(pg_url), open_store(pg_url)
    try:
        ids = [f"r{i}" for i in range(1500)]
        for start in range(0, len(ids), 300):
            one.add_to_inbox([push(i) for i in ids[start:start + 300]])
        moved: dict[str, int] = {}

        def promote(name: str, store: SqlStore) -> None:
            total = 0
            while taken := store.promote_inbox(limit=50):
                total += taken
            moved[name] = total

        threads = [threading.Thread(target=promote, args=(n, s))
                   for n, s in (("one", one), ("two", two))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert sum(moved.values()) == len(ids)
        assert queued_ids(one) == sorted(ids) and inbox_ids(one) == []
    finally:
        one.close()
        two.close()


def test_a_version_5_database_gains_the_inbox_by_migration_6(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "bot.db", isolation_level=None)
    assert apply_migrations(conn, MIGRATIONS[:5]) == 5
    conn.execute("INSERT INTO deliveries (id, event, payload, payload_encoding, received_at,"
                 " not_before, updated_at) VALUES ('old', 'ping', X'7B7D', 'identity', 1, 1, 1)")
    conn.close()
    store = connect(tmp_path / "bot.db")
    try:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 6
        assert store.add_to_inbox([push("old"), push("new")]) == [False, True]
        assert store.promote_all() == 1 and queued_ids(store) == ["new", "old"]
    finally:
        store.close()
