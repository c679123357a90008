"""Durable state of the App: the webhook queue, per-PR review state, waivers, commands.

    from bot.store import open_store
    store = open_store("ci-stability.db")             # SQLite: creates and migrates
    store = open_store("postgresql://host/db")        # PostgreSQL, for several replicas
    store.add_delivery(...); store.claim(now); store.complete(delivery_id)

Interface: `Store` (bot/store/base.py) is the narrow Protocol the rest of the App
depends on. Both backends run the same queries (`SqlStore`, bot/store/sql.py):
`SqliteStore` (bot/store/sqlite.py) is the embedded default, one `serve` per file;
`PostgresStore` (bot/store/postgres.py) serves any number of replicas (leased
claims with `FOR UPDATE SKIP LOCKED`, `LISTEN/NOTIFY` wake-ups).

Asyncio: the web handler and the workers share one event loop and call the store
directly. Every method is one short transaction, and calling it inline measured
faster than hopping to a dedicated thread (bench/RESULTS-intake.md). The one hot
path, webhook intake, goes through `GroupCommitter`, which folds all deliveries that
arrive in one loop iteration into one transaction and resolves each request after
the commit, so a `202` always stands for a committed row. `IntakeProcess`
(bot/store/intake_process.py, opt-in) does the same from a child process.

Adding tables (e.g. the CI failure index): append a migration to
`bot/store/migrations.py` AND its PostgreSQL counterpart to
`bot/store/pg_migrations.py`, then write the queries once against `Db`
(bot/store/db.py), which speaks both.
"""

from bot.store.base import (
    STATUSES,
    Delivery,
    DeliveryStatus,
    NewDelivery,
    Store,
    StoreError,
    WaiverRow,
)
from bot.store.db import (
    DB_ERRORS,
    Db,
    is_postgres_url,
    open_postgres,
    redacted_url,
    url_password,
)
from bot.store.group_commit import GroupCommitter
from bot.store.journal import StoreJournal
from bot.store.migrations import MIGRATIONS, apply_migrations, schema_version
from bot.store.pg_migrations import PG_MIGRATIONS, apply_pg_migrations, pg_schema_version
from bot.store.postgres import PostgresStore, connect_postgres
from bot.store.sql import DEFAULT_LEASE_SECONDS, SqlStore
from bot.store.sqlite import SqliteStore, connect


def open_store(target: str, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> SqlStore:
    """A PostgreSQL store for a `postgresql://` URL, else SQLite at that path."""
    if is_postgres_url(target):
        return connect_postgres(target, lease_seconds)
    return connect(target, lease_seconds=lease_seconds)


__all__ = [
    "DB_ERRORS",
    "DEFAULT_LEASE_SECONDS",
    "MIGRATIONS",
    "PG_MIGRATIONS",
    "STATUSES",
    "Db",
    "Delivery",
    "DeliveryStatus",
    "GroupCommitter",
    "NewDelivery",
    "PostgresStore",
    "SqlStore",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoreJournal",
    "WaiverRow",
    "apply_migrations",
    "apply_pg_migrations",
    "connect",
    "connect_postgres",
    "is_postgres_url",
    "open_postgres",
    "open_store",
    "pg_schema_version",
    "redacted_url",
    "schema_version",
    "url_password",
]
