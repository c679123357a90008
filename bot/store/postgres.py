"""`PostgresStore`: the `Store` for several replicas on one PostgreSQL database.

Selected by `CI_STABILITY_DB=postgresql://…` (psycopg 3). The queries are SQLite's
(bot/store/sql.py); what PostgreSQL adds:

- claims lock their row with `FOR UPDATE SKIP LOCKED`, so replicas claiming at once
  each get a different delivery without waiting on one another, and claims are
  leased, so a dead replica's work is retried (no start-up requeue: the others'
  `running` rows are alive);
- intake writes a whole group-commit batch into the inbox (bot/store/inbox.py) with
  one binary COPY, one round trip and one commit however many deliveries arrived
  together, on its own connection and off the event loop (GroupCommitter), so
  requests keep being read while the server flushes its WAL;
- each batch sends a `NOTIFY`; every replica `LISTEN`s on its own connection and
  wakes its idle workers at once instead of at the next poll.

Durability is PostgreSQL's: a `202` stands for a committed row (synchronous_commit
as the server is configured; the default `on` waits for the WAL flush).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from bot.store.base import NewDelivery, StoreError
from bot.store.db import Db, open_postgres, redacted_url
from bot.store.inbox import INBOX_COLUMNS, inbox_row
from bot.store.pg_migrations import apply_pg_migrations
from bot.store.rows import encode_payload
from bot.store.sql import DEFAULT_LEASE_SECONDS, SqlStore

log = logging.getLogger("bot.store")

CHANNEL = "ci_stability_deliveries"
INTAKE_CONNECTIONS = 3
# One statement in autocommit: insert, notify and commit in a single round trip (the
# server folds a transaction's identical notifications into one).
_INSERT_BATCH = (
    "WITH added AS (INSERT INTO deliveries (id, event, action, payload, payload_encoding,"
    " received_at, not_before, group_key, status, attempts, updated_at)"
    " SELECT *, 'pending', 0, ? FROM unnest(?::text[], ?::text[], ?::text[], ?::bytea[],"
    " ?::text[], ?::float8[], ?::float8[], ?::text[])"
    " ON CONFLICT (id) DO NOTHING RETURNING id)"
    " SELECT id, pg_notify(?, ?) FROM added"
)


_COPY_INBOX = f"COPY inbox ({INBOX_COLUMNS}) FROM STDIN (FORMAT BINARY)"
_INBOX_TYPES = ["text", "text", "text", "bytea", "text", "float8", "float8"]
# The conflict-aware way: ids already in the queue are left out (the `inbox_known`
# trigger would fail the statement), ids already in the inbox by ON CONFLICT.
_INBOX_BATCH = (
    f"WITH added AS (INSERT INTO inbox ({INBOX_COLUMNS})"
    " SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::bytea[], ?::text[],"
    " ?::float8[], ?::float8[]) AS u(id, event, action, payload, payload_encoding,"
    " received_at, not_before)"
    " WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = u.id)"
    " ON CONFLICT (id) DO NOTHING RETURNING id)"
    " SELECT id, pg_notify(?, ?) FROM added"
)
_RETRIES = 3


def _copy(db: Db, rows: Sequence[tuple[Any, ...]]) -> bool:
    """The common case, a batch of new ids, as one binary COPY into the inbox: a fifth
    of the server's CPU of the INSERT … SELECT FROM unnest and a tenth of the client's
    (bench/RESULTS-intake.md). COPY has no ON CONFLICT: a batch holding a known id
    (the inbox's primary key, or the `inbox_known` trigger for one already queued)
    fails whole (nothing written; one statement in autocommit) and False sends it the
    conflict-aware way."""
    with db.lock:
        db.reconnect_if_dropped()
        try:
            with db.raw.cursor() as cursor, cursor.copy(_COPY_INBOX) as copy:
                copy.set_types(_INBOX_TYPES)
                for row in rows:
                    copy.write_row(row)
        except psycopg.errors.UniqueViolation:
            return False
    return True


def connect_postgres(url: str, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> PostgresStore:
    """Open (migrating as needed) the database at `url`."""
    return PostgresStore(url, lease_seconds)


class PostgresStore(SqlStore):
    shared = True
    # Intake commits wait on the server's WAL flush: GroupCommitter runs up to this
    # many at once on threads, each on an intake connection of its own, so the event
    # loop keeps taking requests and the server flushes concurrent commits together.
    commit_off_loop = INTAKE_CONNECTIONS

    def __init__(self, url: str, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        self.url = url
        try:
            db = open_postgres(url)
            apply_pg_migrations(db)
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the database {redacted_url(url)}: "
                             f"{str(exc).strip()}") from None
        super().__init__(db, lease_seconds)
        self._intake: queue.SimpleQueue[Db] = queue.SimpleQueue()
        for _ in range(INTAKE_CONNECTIONS):
            self._intake.put(open_postgres(url))
        self._listener: threading.Thread | None = None
        self._stop = threading.Event()

    def add_deliveries(self, batch: Sequence[NewDelivery]) -> list[bool]:
        """Straight into the queue (intake goes through the inbox: `add_to_inbox`)."""
        if not batch:
            return []
        now = time.time()
        encoded = [encode_payload(d.payload) for d in batch]
        db = self._intake.get()
        try:
            columns: list[list[Any]] = [
                [d.delivery_id for d in batch], [d.event for d in batch],
                [d.action for d in batch], [p for p, _ in encoded], [e for _, e in encoded],
                [d.received_at for d in batch], [d.not_before for d in batch],
                [d.group_key for d in batch],
            ]
            rows = db.execute(_INSERT_BATCH, (now, *columns, CHANNEL, self.owner)).fetchall()
        finally:
            self._intake.put(db)
        inserted = {row[0] for row in rows}
        # A batch may carry one id twice: only its first copy was inserted.
        added: list[bool] = []
        for d in batch:
            added.append(d.delivery_id in inserted)
            inserted.discard(d.delivery_id)
        return added

    def add_to_inbox(self, batch: Sequence[NewDelivery]) -> list[bool]:
        if not batch:
            return []
        rows = [inbox_row(d) for d in batch]
        db = self._intake.get()
        try:
            if len({d.delivery_id for d in batch}) == len(batch) and _copy(db, rows):
                # Committed (autocommit COPY); the wake-up is a hint, so it may follow.
                db.execute("SELECT pg_notify(?, ?)", (CHANNEL, self.owner))
                return [True] * len(batch)
            inserted = self._insert_inbox(db, rows)
        finally:
            self._intake.put(db)
        # A batch may carry one id twice: only its first copy was inserted.
        added: list[bool] = []
        for d in batch:
            added.append(d.delivery_id in inserted)
            inserted.discard(d.delivery_id)
        return added

    def _insert_inbox(self, db: Db, rows: Sequence[tuple[Any, ...]]) -> set[str]:
        columns = [list(column) for column in zip(*rows, strict=True)]
        for attempt in range(_RETRIES):
            try:
                return {row[0] for row in db.execute(
                    _INBOX_BATCH, (*columns, CHANNEL, self.owner)).fetchall()}
            except psycopg.errors.UniqueViolation:
                # One of the ids was promoted into the queue between this statement's
                # NOT EXISTS and its trigger: the next try leaves it out.
                if attempt == _RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def listen(self, wake: Callable[[], None]) -> None:
        if self._listener is not None:
            return
        self._stop.clear()
        self._listener = threading.Thread(target=self._listen, args=(wake,),
                                          name="pg-listen", daemon=True)
        self._listener.start()

    def _listen(self, wake: Callable[[], None]) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            if note.payload != self.owner:  # ours woke our workers already
                                wake()
            except psycopg.Error as exc:
                # Workers still poll: a lost listener delays wake-ups, it loses nothing.
                log.warning("LISTEN connection lost; reconnecting", extra={"error": str(exc)})
                self._stop.wait(1.0)

    def close(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.join(timeout=5)
            self._listener = None
        # Closed, then put back: a late intake batch fails at once instead of waiting.
        intake = [self._intake.get() for _ in range(INTAKE_CONNECTIONS)]
        for db in intake:
            db.close()
            self._intake.put(db)
        super().close()

