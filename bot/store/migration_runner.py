"""The one migration runner, for both backends' lists (bot/store/migrations.py for SQLite,
bot/store/pg_migrations.py for PostgreSQL). What differs is only where the version is
kept and how two processes starting together are kept from both applying a step:

* SQLite: `PRAGMA user_version`; the step's `BEGIN IMMEDIATE` is the write lock;
* PostgreSQL: a `schema_migrations` table; a transaction-level advisory lock.

Each step runs in its own transaction and re-reads the version under the lock, so a
failure leaves the previous version and exactly one process applies each step.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from bot.store.base import StoreError
from bot.store.db import Db

Migration = tuple[str, ...]
# Any constant; it only has to differ from other advisory locks taken in the database.
_MIGRATION_LOCK = 0x43495354  # "CIST"


def schema_version_of(db: Db) -> int:
    if db.postgres:
        row = db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    else:
        row = db.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def _lock(db: Db) -> None:
    if db.postgres:  # SQLite's BEGIN IMMEDIATE already holds the database's write lock
        db.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))


def _record(db: Db, version: int) -> None:
    if db.postgres:
        db.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                   (version, time.time()))
    else:
        db.execute(f"PRAGMA user_version = {version:d}")  # a pragma takes no parameter


def run_migrations(db: Db, steps: Sequence[Migration]) -> int:
    """Bring the schema up to date with `steps`; returns the resulting version."""
    if db.postgres:
        with db.transaction():
            # Under the lock too: two concurrent CREATE TABLE IF NOT EXISTS can collide.
            _lock(db)
            db.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                       " version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)")
    for version, statements in enumerate(steps, start=1):
        if schema_version_of(db) >= version:
            continue
        with db.transaction():
            _lock(db)
            if schema_version_of(db) < version:  # another process may have just applied it
                db.executescript(statements)
                _record(db, version)
    current = schema_version_of(db)
    if current > len(steps):
        # SQLite's error is wrapped by its store's opening (bot/store/sqlite.py).
        error = StoreError if db.postgres else sqlite3.DatabaseError
        raise error(f"database schema version {current} is newer than this program knows "
                    f"({len(steps)}); upgrade ci-stability-bot")
    return current
