"""The per-pull-request tables' queries (both backends): PR leases, published state,
waivers, slash-command bookkeeping. Mixed into `SqlStore` (bot/store/sql.py)."""

from __future__ import annotations

import json
import time
from typing import Any, cast

from bot.store.base import WaiverRow
from bot.store.db import Db


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
