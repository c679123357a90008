"""`SqliteStore`: the embedded `Store` on stdlib sqlite3 in WAL mode.

One connection per process, serialised by a lock so the event loop and helper
threads may share it. Each method is one short transaction. WAL lets other
processes (the CLI, an operator's sqlite3 shell) read while the server writes;
`busy_timeout` makes writers from several processes wait instead of failing.

Durability: with `synchronous=NORMAL` (the default) a committed transaction
survives the process being killed (-9 included), but the last few may be lost if
the machine loses power or the kernel crashes before the WAL is synced.
`synchronous=FULL` syncs the WAL at every commit and survives those too, at the
cost of one fsync per transaction (group commit amortises it on intake).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, cast

from bot.store.base import (
    MAX_ERROR_CHARS,
    STATUSES,
    Delivery,
    DeliveryStatus,
    NewDelivery,
    StoreError,
    WaiverRow,
)
from bot.store.migrations import apply_migrations
from bot.store.rows import DELIVERY_COLUMNS, delivery_from_row, encode_payload

Synchronous = Literal["NORMAL", "FULL"]
BUSY_TIMEOUT_MS = 10_000
_INSERT_DELIVERY = (
    "INSERT INTO deliveries (id, event, action, payload, payload_encoding, received_at,"
    " not_before, group_key, status, attempts, updated_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?) ON CONFLICT (id) DO NOTHING"
)


def connect(path: str | Path, synchronous: Synchronous = "NORMAL") -> SqliteStore:
    """Open (creating and migrating as needed) the database at `path`."""
    return SqliteStore(path, synchronous)


class SqliteStore:
    def __init__(self, path: str | Path, synchronous: Synchronous = "NORMAL") -> None:
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
        self._conn = conn
        self._lock = threading.Lock()

    # --- access for modules that add their own tables (see migrations.py) -------
    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, held exclusively for a few reads."""
        with self._lock:
            yield self._conn

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """The connection inside one write transaction, committed on exit."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # --- the delivery queue ------------------------------------------------------
    def add_delivery(
        self, delivery_id: str, event: str, action: str | None, payload: bytes,
        received_at: float, not_before: float, group_key: str | None,
    ) -> bool:
        new = NewDelivery(delivery_id, event, action, payload, received_at, not_before, group_key)
        return self.add_deliveries([new])[0]

    def add_deliveries(self, batch: Sequence[NewDelivery]) -> list[bool]:
        added: list[bool] = []
        now = time.time()
        # Compressed before taking the lock: zlib releases the GIL, sqlite3 does not need it.
        encoded = [encode_payload(d.payload) for d in batch]
        with self.writing() as conn:
            for d, (payload, encoding) in zip(batch, encoded, strict=True):
                cursor = conn.execute(_INSERT_DELIVERY, (
                    d.delivery_id, d.event, d.action, payload, encoding, d.received_at,
                    d.not_before, d.group_key, now,
                ))
                added.append(cursor.rowcount == 1)
        return added

    def claim(self, now: float) -> Delivery | None:
        with self._lock:
            # One statement, so no other process can claim the same row in between.
            row = self._conn.execute(
                "UPDATE deliveries SET status = 'running', attempts = attempts + 1,"
                " updated_at = ? WHERE id = (SELECT id FROM deliveries"
                " WHERE status = 'pending' AND not_before <= ?"
                " ORDER BY not_before, received_at LIMIT 1)"
                f" RETURNING {DELIVERY_COLUMNS}",
                (time.time(), now),
            ).fetchone()
        return None if row is None else delivery_from_row(row)

    def complete(self, delivery_id: str) -> None:
        self._set_status(delivery_id, "done")

    def supersede(self, delivery_id: str) -> None:
        self._set_status(delivery_id, "superseded")

    def fail(self, delivery_id: str, error: str, retry_at: float | None) -> None:
        status: DeliveryStatus = "dead" if retry_at is None else "pending"
        with self._lock:
            self._conn.execute(
                "UPDATE deliveries SET status = ?, last_error = ?,"
                " not_before = COALESCE(?, not_before), updated_at = ? WHERE id = ?",
                (status, error[:MAX_ERROR_CHARS], retry_at, time.time(), delivery_id),
            )

    def requeue_running(self) -> int:
        with self._lock:
            cursor = self._conn.execute(
                "UPDATE deliveries SET status = 'pending', updated_at = ?"
                " WHERE status = 'running'",
                (time.time(),),
            )
        return cursor.rowcount

    def has_newer_pending(self, group_key: str, received_at: float) -> bool:
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM deliveries WHERE group_key = ? AND received_at > ?"
                " AND status IN ('pending', 'running', 'done') LIMIT 1",
                (group_key, received_at),
            ).fetchone()
        return row is not None

    def next_due(self) -> float | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT MIN(not_before) FROM deliveries WHERE status = 'pending'"
            ).fetchone()
        return None if row[0] is None else float(row[0])

    def get_delivery(self, delivery_id: str) -> Delivery | None:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE id = ?", (delivery_id,)
            ).fetchone()
        return None if row is None else delivery_from_row(row)

    def counts(self) -> dict[DeliveryStatus, int]:
        result: dict[DeliveryStatus, int] = dict.fromkeys(STATUSES, 0)
        with self._lock:
            rows = self._conn.execute(
                "SELECT status, COUNT(*) FROM deliveries GROUP BY status"
            ).fetchall()
        for status, count in rows:
            if status in result:
                result[cast(DeliveryStatus, status)] = int(count)
        return result

    def prune(self, before: float) -> int:
        with self._lock:
            cursor = self._conn.execute(
                "DELETE FROM deliveries WHERE status IN ('done', 'superseded', 'dead')"
                " AND updated_at < ?",
                (before,),
            )
        return cursor.rowcount

    def _set_status(self, delivery_id: str, status: DeliveryStatus) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE deliveries SET status = ?, updated_at = ? WHERE id = ?",
                (status, time.time(), delivery_id),
            )

    # --- per-PR published state ------------------------------------------------------
    def get_pr_state(self, repo: str, number: int) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT state FROM pr_state WHERE repo = ? AND number = ?", (repo, number)
            ).fetchone()
        return None if row is None else cast(dict[str, Any], json.loads(row[0]))

    def put_pr_state(self, repo: str, number: int, state: dict[str, Any]) -> None:
        text = json.dumps(state, sort_keys=True, separators=(",", ":"))
        with self._lock:
            self._conn.execute(
                "INSERT INTO pr_state (repo, number, state, updated_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (repo, number) DO UPDATE SET state = excluded.state,"
                " updated_at = excluded.updated_at",
                (repo, number, text, time.time()),
            )

    # --- waivers -----------------------------------------------------------------------
    def add_waiver(
        self, repo: str, number: int, rule: str, path: str | None, reason: str,
        by: str, at: float,
    ) -> int:
        with self._lock:
            cursor = self._conn.execute(
                "INSERT INTO waivers (repo, number, rule, path, reason, by_user, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (repo, number, rule, path, reason, by, at),
            )
        return int(cursor.lastrowid or 0)

    def remove_waivers(self, repo: str, number: int, rule: str) -> int:
        with self._lock:
            cursor = self._conn.execute(
                "DELETE FROM waivers WHERE repo = ? AND number = ? AND rule = ?",
                (repo, number, rule),
            )
        return cursor.rowcount

    def list_waivers(self, repo: str, number: int) -> list[WaiverRow]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, repo, number, rule, path, reason, by_user, at FROM waivers"
                " WHERE repo = ? AND number = ? ORDER BY at, id",
                (repo, number),
            ).fetchall()
        return [WaiverRow(*row) for row in rows]

    def current_waivers(self, limit: int = 200) -> list[WaiverRow]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, repo, number, rule, path, reason, by_user, at FROM waivers"
                " ORDER BY at DESC, id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [WaiverRow(*row) for row in rows]

    # --- slash commands ------------------------------------------------------------------
    def mark_comment_handled(self, comment_id: int) -> bool:
        with self._lock:
            cursor = self._conn.execute(
                "INSERT INTO handled_comments (comment_id, at) VALUES (?, ?)"
                " ON CONFLICT (comment_id) DO NOTHING",
                (comment_id, time.time()),
            )
        return cursor.rowcount == 1

    def allow_command(self, user: str, now: float, limit: int, window_s: float) -> bool:
        with self.writing() as conn:
            conn.execute(
                "DELETE FROM command_log WHERE user = ? AND at <= ?", (user, now - window_s)
            )
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM command_log WHERE user = ?", (user,)
            ).fetchone()
            if count >= limit:
                return False
            conn.execute("INSERT INTO command_log (user, at) VALUES (?, ?)", (user, now))
        return True

    # --- operations ---------------------------------------------------------------------------
    def ping(self) -> bool:
        try:
            with self._lock:
                self._conn.execute("SELECT COUNT(*) FROM deliveries WHERE 0").fetchone()
        except sqlite3.Error:
            return False
        return True

    def close(self) -> None:
        with self._lock:
            self._conn.close()
