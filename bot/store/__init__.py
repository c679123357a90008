"""Durable state of the App: the webhook queue, per-PR review state, waivers, commands.

    from bot.store import connect
    store = connect("ci-stability.db")          # creates and migrates
    store.add_delivery(...); store.claim(now); store.complete(delivery_id)

Interface: `Store` (bot/store/base.py) is the narrow Protocol the rest of the App
depends on; `SqliteStore` (bot/store/sqlite.py) is the embedded implementation. A
PostgreSQL store would implement the same Protocol (claim with
`FOR UPDATE SKIP LOCKED`) and keep its own migration list.

Asyncio: the web handler and the workers share one event loop and call the store
directly. Every method is one short transaction (tens of microseconds under WAL with
synchronous=NORMAL), and calling it inline measured faster than hopping to a
dedicated thread (bench/RESULTS-intake.md). The one hot path, webhook intake, goes
through `GroupCommitter`, which folds all deliveries that arrive in one loop
iteration into one transaction and resolves each request after the commit, so a
`202` always stands for a committed row.

Adding tables (e.g. the CI failure index): append a migration to
`bot/store/migrations.py` (see its docstring), then write your queries in your own
module against `SqliteStore.reading()` / `SqliteStore.writing()`, which hand out the
shared connection under the store's lock (writing() inside BEGIN IMMEDIATE … COMMIT).
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
from bot.store.group_commit import GroupCommitter
from bot.store.migrations import MIGRATIONS, apply_migrations, schema_version
from bot.store.sqlite import SqliteStore, connect

__all__ = [
    "MIGRATIONS",
    "STATUSES",
    "Delivery",
    "DeliveryStatus",
    "GroupCommitter",
    "NewDelivery",
    "SqliteStore",
    "Store",
    "StoreError",
    "WaiverRow",
    "apply_migrations",
    "connect",
    "schema_version",
]
