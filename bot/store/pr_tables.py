"""The per-pull-request tables' queries (both backends): PR leases, published state,
waivers, slash-command bookkeeping. Mixed into `SqlStore` (bot/store/sql.py)."""

from __future__ import annotations

import json
import time
from typing import Any, cast

from bot.store.base import WaiverRow
from bot.store.db import Db

PR_WAITING_PREFIX = "waiting: "


def pr_waiting_note(repo: str, number: int) -> str:
    """The note of a delivery handed back because its PR was busy: it names the PR, so
    the delivery that frees the PR can wake the next one waiting for it."""
    return f"{PR_WAITING_PREFIX}{repo}#{number} is being reviewed elsewhere"


class PullRequestTables:
    db: Db
    owner: str
    lease_seconds: float

    def _holder(self, delivery_id: str) -> str:
        return f"{self.owner}/{delivery_id}"

    # --- one review of a PR at a time ----------------------------------------------
    def lease_pr(self, repo: str, number: int, delivery_id: str, now: float) -> bool:
        """Take the PR for the delivery (free, expired, or already its own); False
        while another delivery holds it. Renewed with the delivery's lease."""
        holder = self._holder(delivery_id)
        row = self.db.execute(
            "INSERT INTO pr_leases (repo, number, holder, until) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (repo, number) DO UPDATE SET holder = excluded.holder,"
            " until = excluded.until"
            " WHERE pr_leases.until < ? OR pr_leases.holder = excluded.holder"
            " RETURNING holder",
            (repo, number, holder, now + self.lease_seconds, now),
        ).fetchone()
        return row is not None

    def release_pr(self, repo: str, number: int, delivery_id: str) -> None:
        self.db.execute("DELETE FROM pr_leases WHERE repo = ? AND number = ? AND holder = ?",
                        (repo, number, self._holder(delivery_id)))

    def pr_lease_until(self, repo: str, number: int) -> float | None:
        """When the PR's lease runs out unless its holder renews it; None when free."""
        row = self.db.execute("SELECT until FROM pr_leases WHERE repo = ? AND number = ?",
                              (repo, number)).fetchone()
        return None if row is None else float(row[0])

    def wake_pr_waiter(self, repo: str, number: int, now: float) -> bool:
        """Make the oldest delivery handed back for this busy PR (its note is
        `pr_waiting_note`) due now; False when none waits. The others stay asleep until
        their turn or the lease they waited on runs out (bot/app/queue.py)."""
        row = self.db.execute(
            "UPDATE deliveries SET not_before = ? WHERE id = (SELECT id FROM deliveries"
            " WHERE status = 'pending' AND not_before > ? AND last_error = ?"
            " ORDER BY received_at, id LIMIT 1) RETURNING id",
            (now, now, pr_waiting_note(repo, number)),
        ).fetchone()
        return row is not None

    # --- per-PR published state ------------------------------------------------------
    def get_pr_state(self, repo: str, number: int) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT state FROM pr_state WHERE repo = ? AND number = ?", (repo, number)
        ).fetchone()
        return None if row is None else cast(dict[str, Any], json.loads(row[0]))

    def put_pr_state(self, repo: str, number: int, state: dict[str, Any]) -> None:
        text = json.dumps(state, sort_keys=True, separators=(",", ":"))
        self.db.execute(
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
        row = self.db.execute(
            "INSERT INTO waivers (repo, number, rule, path, reason, by_user, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (repo, number, rule, path, reason, by, at),
        ).fetchone()
        return int(row[0])

    def remove_waivers(self, repo: str, number: int, rule: str) -> int:
        cursor = self.db.execute(
            "DELETE FROM waivers WHERE repo = ? AND number = ? AND rule = ?",
            (repo, number, rule),
        )
        return cursor.rowcount

    def list_waivers(self, repo: str, number: int) -> list[WaiverRow]:
        rows = self.db.execute(
            "SELECT id, repo, number, rule, path, reason, by_user, at FROM waivers"
            " WHERE repo = ? AND number = ? ORDER BY at, id",
            (repo, number),
        ).fetchall()
        return [WaiverRow(int(r[0]), r[1], int(r[2]), r[3], r[4], r[5], r[6], float(r[7]))
                for r in rows]

    def current_waivers(self, limit: int = 200) -> list[WaiverRow]:
        rows = self.db.execute(
            "SELECT id, repo, number, rule, path, reason, by_user, at FROM waivers"
            " ORDER BY at DESC, id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [WaiverRow(int(r[0]), r[1], int(r[2]), r[3], r[4], r[5], r[6], float(r[7]))
                for r in rows]

    # --- slash commands ------------------------------------------------------------------
    def mark_comment_handled(self, comment_id: int) -> bool:
        cursor = self.db.execute(
            "INSERT INTO handled_comments (comment_id, at) VALUES (?, ?)"
            " ON CONFLICT (comment_id) DO NOTHING",
            (comment_id, time.time()),
        )
        return cursor.rowcount == 1

    def allow_command(self, user: str, now: float, limit: int, window_s: float) -> bool:
        with self.db.transaction() as db:
            if db.postgres:  # two replicas counting one user's commands take turns
                db.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (user,))
            db.execute('DELETE FROM command_log WHERE "user" = ? AND at <= ?',
                       (user, now - window_s))
            (count,) = db.execute(
                'SELECT COUNT(*) FROM command_log WHERE "user" = ?', (user,)
            ).fetchone()
            if count >= limit:
                return False
            db.execute('INSERT INTO command_log ("user", at) VALUES (?, ?)', (user, now))
        return True
