"""The intake inbox: verified deliveries as they arrived, until a promoter queues them.

Webhook intake (bot/app/web.py) makes a delivery durable with the least work that
still answers a redelivery as a duplicate: one row of `inbox` (id, event, action, the
LZ4 payload, received_at, the debounce's not_before), a table with its primary key as
its only index. Everything else the queue needs, the debounce key (the repository
scan, or a full parse) and the queue table's four indexes, is paid by the promoter,
off the request path: `promote_inbox` moves a batch from `inbox` to `deliveries` in
one transaction, so a process killed mid-promotion leaves the rows in the inbox and a
later promotion (this process after its restart, or any replica) moves them once.

Nothing lost or doubled:
- an id is new at intake only if neither table holds it (SQLite: one lookup under the
  write lock; PostgreSQL: the `inbox_known` trigger of migration 6 and the inbox's
  primary key), so a redelivery is answered `200 duplicate` however far it got;
- an id that slipped into both (a redelivery racing the promotion of its first copy on
  PostgreSQL) is dropped at promotion: `deliveries` inserts with ON CONFLICT DO NOTHING;
- on PostgreSQL, replicas promoting at once take disjoint batches (`FOR UPDATE SKIP
  LOCKED` in the DELETE … RETURNING).

The queue's readers promote first (`claim`, `get_delivery`, `next_due`), and `counts`
reports inbox rows as pending, so callers see one queue.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import lz4.block

from bot.store.base import NewDelivery
from bot.store.db import Db
from bot.store.delivery_fields import push_group_key
from bot.store.rows import encode_payload

log = logging.getLogger("bot.store")

PROMOTE_BATCH = 512
INBOX_COLUMNS = "id, event, action, payload, payload_encoding, received_at, not_before"
_INSERT_INBOX = (
    f"INSERT INTO inbox ({INBOX_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (id) DO NOTHING"
)
_QUEUE = (
    "INSERT INTO deliveries (id, event, action, payload, payload_encoding, received_at,"
    " not_before, group_key, status, attempts, updated_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?) ON CONFLICT (id) DO NOTHING"
)


def inbox_row(d: NewDelivery) -> tuple[Any, ...]:
    payload, encoding = encode_payload(d.payload)
    return (d.delivery_id, d.event, d.action, payload, encoding, d.received_at, d.not_before)


def queue_row(row: Sequence[Any], now: float) -> tuple[Any, ...]:
    """An inbox row as a `deliveries` row: the debounce key of a push, read now."""
    delivery_id, event, action, payload, encoding, received_at, not_before = row
    payload = bytes(payload)
    group_key = None
    if (event, action) == ("pull_request", "synchronize"):
        raw = lz4.block.decompress(payload) if encoding == "lz4" else payload
        group_key = push_group_key(raw)
        if group_key is None:  # nothing to debounce on: due at once, as before the inbox
            not_before = received_at
    return (delivery_id, event, action, payload, encoding, received_at, not_before,
            group_key, now)


class InboxTables:
    db: Db

    def add_to_inbox(self, batch: Sequence[NewDelivery]) -> list[bool]:
        """Make `batch` durable in one transaction; False for an id already known
        (in the inbox or the queue). The batch's `group_key`s are not kept: the
        promoter reads them from the payload."""
        if not batch:
            return []
        rows = [inbox_row(d) for d in batch]  # compressed before the lock: LZ4 frees the GIL
        ids = [d.delivery_id for d in batch]
        marks = ", ".join("?" for _ in batch)
        with self.db.transaction() as db:
            known = {r[0] for r in db.execute(
                f"SELECT id FROM deliveries WHERE id IN ({marks})"
                f" UNION ALL SELECT id FROM inbox WHERE id IN ({marks})", ids + ids).fetchall()}
            added: list[bool] = []
            new_rows = []
            for delivery_id, row in zip(ids, rows, strict=True):
                new = delivery_id not in known
                added.append(new)
                if new:  # a batch may carry one id twice: only its first copy is new
                    known.add(delivery_id)
                    new_rows.append(row)
            db.executemany(_INSERT_INBOX, new_rows)
        return added

    def promote_inbox(self, limit: int = PROMOTE_BATCH) -> int:
        """Move up to `limit` inbox rows into the queue, in one transaction; how many
        were taken (duplicates of queued ids included, and dropped)."""
        if self.db.execute("SELECT 1 FROM inbox LIMIT 1").fetchone() is None:
            return 0  # the common case costs no write lock
        now = time.time()
        with self.db.transaction() as db:
            taken = self._take_inbox(db, limit)
            db.executemany(_QUEUE, [queue_row(row, now) for row in taken])
        return len(taken)

    def promote_all(self) -> int:
        """Empty the inbox into the queue (batch by batch); how many rows were moved."""
        moved = 0
        while taken := self.promote_inbox():
            moved += taken
        return moved

    def inbox_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM inbox").fetchone()[0])

    def _take_inbox(self, db: Db, limit: int) -> list[Any]:
        if db.postgres:
            # Replicas promoting at once each lock and take different rows.
            return db.execute(
                f"DELETE FROM inbox WHERE id IN (SELECT id FROM inbox LIMIT ?"
                f" FOR UPDATE SKIP LOCKED) RETURNING {INBOX_COLUMNS}", (limit,)).fetchall()
        # SQLite: the transaction holds the write lock, so no one else takes these.
        rows = db.execute(f"SELECT {INBOX_COLUMNS} FROM inbox ORDER BY rowid LIMIT ?",
                          (limit,)).fetchall()
        if rows:
            marks = ", ".join("?" for _ in rows)
            db.execute(f"DELETE FROM inbox WHERE id IN ({marks})", [r[0] for r in rows])
        return rows
