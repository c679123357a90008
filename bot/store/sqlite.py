"""`SqliteStore`: the embedded `Store` on stdlib sqlite3 in WAL mode.

One connection per process, serialised by a lock so the event loop and helper
threads may share it. Each method is one short transaction (the queries live in
bot/store/sql.py, shared with PostgreSQL). WAL lets other processes (the CLI, an
operator's sqlite3 shell) read while the server writes; `busy_timeout` makes writers
from several processes wait instead of failing.

Durability: with `synchronous=NORMAL` (the default) a committed transaction
survives the process being killed (-9 included), but the last few may be lost if
the machine loses power or the kernel crashes before the WAL is synced.
`synchronous=FULL` syncs the WAL at every commit and survives those too, at the
cost of one fsync per transaction (group commit amortises it on intake).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from bot.store.base import StoreError
from bot.store.db import Db
from bot.store.migrations import apply_migrations
from bot.store.sql import DEFAULT_LEASE_SECONDS, SqlStore

log = logging.getLogger("bot.store")

Synchronous = Literal["NORMAL", "FULL"]
BUSY_TIMEOUT_MS = 10_000
CHECKPOINT_SECONDS = 0.5


def connect(path: str | Path, synchronous: Synchronous = "NORMAL",
            lease_seconds: float = DEFAULT_LEASE_SECONDS) -> SqliteStore:
    """Open (creating and migrating as needed) the database at `path`."""
    return SqliteStore(path, synchronous, lease_seconds)


class SqliteStore(SqlStore):
    # One `serve` per database file: at start it takes back whatever was left running.
    shared = False
    # Intake batches are written on the loop (group_commit.py). On a writer thread they
    # measured faster under wrk, but then the event loop and that thread contend for
    # the one connection and the file's write lock with the other connections serve
    # opens, and the payload fuzz (tests/app/test_fuzz_payloads.py) saw intake fail
    # with 503s in a loaded suite run; kept on the loop until that is understood.
    commit_off_loop = 0

    def __init__(self, path: str | Path, synchronous: Synchronous = "NORMAL",
                 lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL, not {synchronous!r}")
        self.path = str(path)
        try:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute(f"PRAGMA synchronous = {synchronous}")
            conn.execute("PRAGMA foreign_keys = ON")
            apply_migrations(conn)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the database {self.path!r}: {exc}") from None
        super().__init__(Db("sqlite", conn), lease_seconds)
        self._checkpoints: tuple[threading.Event, threading.Thread] | None = None

    def offload_checkpoints(self, interval: float = CHECKPOINT_SECONDS) -> None:
        """Copy the WAL into the database file on a thread and connection of their own,
        instead of in the commit that fills the WAL past 1,000 pages: that commit was
        intake's, on the event loop, and a checkpoint fsyncs the WAL and the file
        (~120 against ~185 µs of wall time a row in 32-row inbox batches of the 28 kB
        payload, same CPU). PASSIVE: never waits for a writer, so under a sustained
        burst the WAL grows until a checkpoint finds no commit running after it; the
        next write then starts it over. Durability is unchanged: a commit is in the WAL."""
        if self._checkpoints is not None:
            return
        self.db.execute("PRAGMA wal_autocheckpoint = 0")
        stop = threading.Event()
        thread = threading.Thread(target=self._checkpoint_loop, args=(stop, interval),
                                  name="sqlite-checkpoints", daemon=True)
        self._checkpoints = (stop, thread)
        thread.start()

    def _checkpoint_loop(self, stop: threading.Event, interval: float) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            while not stop.wait(interval):
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error as exc:  # retried at the next beat
                    log.warning("WAL checkpoint failed: %s", exc)
        finally:
            conn.close()

    def close(self) -> None:
        if self._checkpoints is not None:
            stop, thread = self._checkpoints
            stop.set()
            thread.join()
            self._checkpoints = None
        super().close()

    # --- access for modules that add their own tables (see migrations.py) -------
    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, held exclusively for a few reads."""
        with self.db.lock:
            yield self.db.raw

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """The connection inside one write transaction, committed on exit."""
        with self.db.transaction():
            yield self.db.raw
