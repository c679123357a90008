"""`SqlStore`: every `Store` query, written once for SQLite and PostgreSQL.

The backends differ only in how they connect and migrate (bot/store/sqlite.py,
bot/store/postgres.py), in the claim's row lock (`FOR UPDATE SKIP LOCKED` on
PostgreSQL, where several replicas claim at once; SQLite serialises writers on its
file lock) and in the batched intake insert.

Leases: a claim stamps the row with this process's `owner` and `lease_until`; the
worker renews its leases while a handler runs. A row left `running` by a replica
that died is claimable again once its lease has run out, so its work is retried by
another replica (and the claim counts towards `max_attempts`, as a crash should).
Status changes after a claim are fenced by the owner: a replica whose lease was
taken over cannot complete or fail a delivery it no longer holds, nor one another
replica finished or handed back since. `renew` extends only leases that have not run
out, so a replica stalled past its lease never revives it (bot/app/claims.py).
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from typing import Any, cast

from bot.store.base import (
    MAX_ERROR_CHARS,
    STATUSES,
    Delivery,
    DeliveryStatus,
    NewDelivery,
)
from bot.store.command_tables import CommandTables
from bot.store.db import DB_ERRORS, Db
from bot.store.inbox import InboxTables
from bot.store.journal import JournalTables
from bot.store.pr_tables import PR_WAITING_PREFIX, PullRequestTables
from bot.store.reaction_tables import ReactionTables
from bot.store.rows import DELIVERY_COLUMNS, delivery_from_row, encode_payload

log = logging.getLogger("bot.store")

DEFAULT_LEASE_SECONDS = 60.0
_INSERT_DELIVERY = (
    "INSERT INTO deliveries (id, event, action, payload, payload_encoding, received_at,"
    " not_before, group_key, status, attempts, updated_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?) ON CONFLICT (id) DO NOTHING"
)
_RUNNABLE = (
    "(status = 'pending' AND not_before <= ?) OR (status = 'running' AND lease_until < ?)"
)
# Leaving `running` clears the lease, so the row is free for whoever claims it next.
_UNLEASE = "lease_owner = NULL, lease_until = NULL"
# A row this replica's claim holds, or one never claimed (`replay` handles it directly):
# never one that another replica finished or handed back after this one's lease ran out.
_MINE = "id = ? AND (lease_owner = ? OR (lease_owner IS NULL AND attempts = 0))"


def replica_id() -> str:
    """Unique per process and start: host, pid and a random suffix (pids are reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class SqlStore(InboxTables, PullRequestTables, CommandTables, JournalTables, ReactionTables):
    """The shared queries; subclasses open `self.db` and apply their migrations."""

    # Whether other processes may be working the same queue (see Worker.start).
    shared = False

    def __init__(self, db: Db, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        self.db = db
        self.lease_seconds = lease_seconds
        self.owner = replica_id()
        self._claim_lock = " FOR UPDATE SKIP LOCKED" if db.postgres else ""

    # --- the delivery queue ------------------------------------------------------
    def add_delivery(
        self, delivery_id: str, event: str, action: str | None, payload: bytes,
        received_at: float, not_before: float, group_key: str | None,
    ) -> bool:
        new = NewDelivery(delivery_id, event, action, payload, received_at, not_before, group_key)
        return self.add_deliveries([new])[0]

    def add_deliveries(self, batch: Sequence[NewDelivery]) -> list[bool]:
        now = time.time()
        # Compressed before taking the lock: LZ4 releases the GIL.
        encoded = [encode_payload(d.payload) for d in batch]
        marks = ", ".join("?" for _ in batch)
        with self.db.transaction() as db:
            # Under the write lock, so no other writer adds one of these ids meanwhile:
            # one lookup and one executemany instead of a statement per row.
            known = {row[0] for row in db.execute(
                f"SELECT id FROM deliveries WHERE id IN ({marks})",
                [d.delivery_id for d in batch]).fetchall()} if batch else set()
            added: list[bool] = []
            rows = []
            for d, (payload, encoding) in zip(batch, encoded, strict=True):
                new = d.delivery_id not in known
                added.append(new)
                if new:  # a batch may carry one id twice: only its first copy is new
                    known.add(d.delivery_id)
                    rows.append((d.delivery_id, d.event, d.action, payload, encoding,
                                 d.received_at, d.not_before, d.group_key, now))
            db.executemany(_INSERT_DELIVERY, rows)
        return added

    def claim(self, now: float) -> Delivery | None:
        self.promote_inbox()  # what intake made durable since (bot/store/inbox.py)
        # One statement, so no other process can claim the same row in between.
        row = self.db.execute(
            "UPDATE deliveries SET status = 'running', attempts = attempts + 1,"
            " updated_at = ?, lease_owner = ?, lease_until = ?"
            f" WHERE id = (SELECT id FROM deliveries WHERE {_RUNNABLE}"
            f" ORDER BY not_before, received_at LIMIT 1{self._claim_lock})"
            f" RETURNING {DELIVERY_COLUMNS}",
            (time.time(), self.owner, now + self.lease_seconds, now, now),
        ).fetchone()
        return None if row is None else delivery_from_row(row)

    def renew(self, delivery_ids: Sequence[str], now: float,
              with_pr: Collection[str] = ()) -> set[str]:
        """Extend, to `now` + the lease, this process's leases that are still valid at
        `now` (a lease that ran out may already be another replica's: never revived);
        returns the ids still held. An id in `with_pr` holds a PR lease too (renewed
        with it) and counts as held only if that one was still valid as well."""
        if not delivery_ids:
            return set()
        until = now + self.lease_seconds
        marks = ", ".join("?" for _ in delivery_ids)
        with self.db.transaction() as db:
            held = {str(row[0]) for row in db.execute(
                f"UPDATE deliveries SET lease_until = ? WHERE status = 'running'"
                f" AND lease_owner = ? AND lease_until > ? AND id IN ({marks}) RETURNING id",
                (until, self.owner, now, *delivery_ids),
            ).fetchall()}
            holders = [self._holder(i) for i in sorted(held)]
            prs: set[str] = set()
            if holders:
                prs = {str(row[0]) for row in db.execute(
                    "UPDATE pr_leases SET until = ? WHERE until > ? AND holder IN"
                    f" ({', '.join('?' for _ in holders)}) RETURNING holder",
                    (until, now, *holders),
                ).fetchall()}
        return {i for i in held if i not in with_pr or self._holder(i) in prs}

    def complete(self, delivery_id: str) -> None:
        self._finish(delivery_id, "done")

    def supersede(self, delivery_id: str) -> None:
        self._finish(delivery_id, "superseded")

    def fail(self, delivery_id: str, error: str, retry_at: float | None) -> None:
        status: DeliveryStatus = "dead" if retry_at is None else "pending"
        self._fenced(
            f"UPDATE deliveries SET status = ?, last_error = ?, {_UNLEASE},"
            f" not_before = COALESCE(?, not_before), updated_at = ? WHERE {_MINE}",
            (status, error[:MAX_ERROR_CHARS], retry_at, time.time(), delivery_id, self.owner),
            delivery_id,
        )

    def release(self, delivery_id: str, retry_at: float, note: str | None = None) -> None:
        """Hand a claimed delivery back, due at `retry_at`, without counting the claim
        as an attempt (its PR was busy, or this replica is draining)."""
        self._fenced(
            "UPDATE deliveries SET status = 'pending', attempts = CASE WHEN attempts > 0"
            " THEN attempts - 1 ELSE 0 END,"
            f" {_UNLEASE}, not_before = ?, last_error = COALESCE(?, last_error),"
            f" updated_at = ? WHERE {_MINE}",
            (retry_at, note, time.time(), delivery_id, self.owner), delivery_id,
        )

    def requeue_running(self) -> int:
        """Only for a store no one else works: what is running, and the PRs it held,
        belonged to a dead process, so nothing waits out their leases."""
        with self.db.transaction() as db:
            cursor = db.execute(
                f"UPDATE deliveries SET status = 'pending', {_UNLEASE}, updated_at = ?"
                " WHERE status = 'running'",
                (time.time(),),
            )
            db.execute("DELETE FROM pr_leases")
            # Their waiters slept until those leases ran out; the PRs are free now.
            db.execute("UPDATE deliveries SET not_before = received_at"
                       " WHERE status = 'pending' AND last_error LIKE ?",
                       (f"{PR_WAITING_PREFIX}%",))
        return cursor.rowcount

    def has_newer_pending(self, group_key: str, received_at: float) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM deliveries WHERE group_key = ? AND received_at > ?"
            " AND status IN ('pending', 'running', 'done') LIMIT 1",
            (group_key, received_at),
        ).fetchone()
        return row is not None

    def next_due(self) -> float | None:
        self.promote_inbox()
        if self.db.execute("SELECT 1 FROM inbox LIMIT 1").fetchone() is not None:
            return time.time()  # more to promote: the worker comes back at once
        row = self.db.execute(
            "SELECT MIN(not_before) FROM deliveries WHERE status = 'pending'"
        ).fetchone()
        return None if row[0] is None else float(row[0])

    def get_delivery(self, delivery_id: str) -> Delivery | None:
        self.promote_all()
        row = self.db.execute(
            f"SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE id = ?", (delivery_id,)
        ).fetchone()
        return None if row is None else delivery_from_row(row)

    def counts(self) -> dict[DeliveryStatus, int]:
        result: dict[DeliveryStatus, int] = dict.fromkeys(STATUSES, 0)
        rows = self.db.execute("SELECT status, COUNT(*) FROM deliveries GROUP BY status").fetchall()
        for status, count in rows:
            if status in result:
                result[cast(DeliveryStatus, status)] = int(count)
        result["pending"] += self.inbox_count()  # queued, not yet promoted
        return result

    def prune(self, before: float) -> int:
        cursor = self.db.execute(
            "DELETE FROM deliveries WHERE status IN ('done', 'superseded', 'dead')"
            " AND updated_at < ?",
            (before,),
        )
        return cursor.rowcount

    def offload_checkpoints(self) -> None:
        """For a store whose commits also maintain the log (SQLite's WAL checkpoints):
        do that elsewhere, off the caller's thread. Nothing to do for a server."""

    def listen(self, wake: Callable[[], None]) -> None:
        """Call `wake` (from any thread) when another process queues a delivery.
        Nothing to do for an embedded database: its one server wakes its own workers."""

    def _finish(self, delivery_id: str, status: DeliveryStatus) -> None:
        self._fenced(
            f"UPDATE deliveries SET status = ?, {_UNLEASE}, updated_at = ? WHERE {_MINE}",
            (status, time.time(), delivery_id, self.owner), delivery_id,
        )

    def _fenced(self, sql: str, params: Sequence[Any], delivery_id: str) -> None:
        if self.db.execute(sql, params).rowcount == 0:
            log.warning("delivery no longer held by this replica (its lease ran out and "
                        "another took it over); left as it is",
                        extra={"delivery_id": delivery_id})

    # --- operations ---------------------------------------------------------------------------
    def ping(self) -> bool:
        try:
            self.db.execute("SELECT COUNT(*) FROM deliveries WHERE 1 = 0").fetchone()
        except DB_ERRORS:
            return False
        return True

    def close(self) -> None:
        self.db.close()
