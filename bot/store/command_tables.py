"""Slash-command bookkeeping (both backends): progress of each comment, its effects
exactly once, and rate limits on what the bot writes. Mixed into `SqlStore`.

A comment is handled in steps that may each fail (GitHub down, a kill): its progress
is saved after every step, effects on our own tables (waivers) are recorded in the
same transaction as the step that caused them, and only when the reply is recorded
is the comment marked handled. A retry resumes from the saved progress.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, cast

from bot.store.db import Db

# (bucket, limit, window seconds): e.g. ("user:alice", 10, 600).
RateBucket = tuple[str, int, float]


class CommandTables:
    db: Db

    def comment_handled(self, comment_id: int) -> bool:
        row = self.db.execute("SELECT 1 FROM handled_comments WHERE comment_id = ?",
                              (comment_id,)).fetchone()
        return row is not None

    def command_progress(self, comment_id: int) -> dict[str, Any]:
        row = self.db.execute("SELECT state FROM command_progress WHERE comment_id = ?",
                              (comment_id,)).fetchone()
        return {} if row is None else cast(dict[str, Any], json.loads(row[0]))

    def save_command_progress(self, comment_id: int, progress: dict[str, Any]) -> None:
        self._save_progress(self.db, comment_id, progress)

    def _save_progress(self, db: Db, comment_id: int, progress: dict[str, Any]) -> None:
        db.execute(
            "INSERT INTO command_progress (comment_id, state, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (comment_id) DO UPDATE SET state = excluded.state,"
            " updated_at = excluded.updated_at",
            (comment_id, json.dumps(progress, sort_keys=True), time.time()),
        )

    def waive_once(
        self, comment_id: int, step: int, progress: dict[str, Any], repo: str, number: int,
        rule: str, path: str | None, reason: str, by: str, at: float,
    ) -> None:
        """Record the waiver of command `step` and the progress saying so, together."""
        with self.db.transaction() as db:
            if self._effect(db, comment_id, step) is None:
                db.execute(
                    "INSERT INTO waivers (repo, number, rule, path, reason, by_user, at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (repo, number, rule, path, reason, by, at),
                )
                self._record_effect(db, comment_id, step, 1)
            self._save_progress(db, comment_id, progress)

    def unwaive_once(self, comment_id: int, step: int, progress: dict[str, Any], repo: str,
                     number: int, rule: str) -> int:
        """Remove the rule's waivers for command `step` once; how many it removed."""
        with self.db.transaction() as db:
            removed = self._effect(db, comment_id, step)
            if removed is None:
                removed = db.execute(
                    "DELETE FROM waivers WHERE repo = ? AND number = ? AND rule = ?",
                    (repo, number, rule),
                ).rowcount
                self._record_effect(db, comment_id, step, removed)
            self._save_progress(db, comment_id, progress)
        return removed

    def misfire_once(
        self, comment_id: int, step: int, progress: dict[str, Any], repo: str, number: int,
        rule: str, reason: str | None, by: str, at: float,
    ) -> None:
        """Record a maintainer's false-positive verdict for command `step` once."""
        with self.db.transaction() as db:
            if self._effect(db, comment_id, step) is None:
                db.execute(
                    "INSERT INTO misfires (repo, number, rule, reason, by_user, at)"
                    " VALUES (?, ?, ?, ?, ?, ?)", (repo, number, rule, reason, by, at))
                self._record_effect(db, comment_id, step, 1)
            self._save_progress(db, comment_id, progress)

    def verdict_counts(self) -> dict[tuple[str, str], dict[str, int]]:
        """(repo, rule) → counts of misfires (and their PRs) and waivers, for `stats`."""
        counts: dict[tuple[str, str], dict[str, int]] = {}
        for table, column in (("misfires", "misfires"), ("waivers", "waivers")):
            rows = self.db.execute(
                f"SELECT repo, rule, COUNT(*), COUNT(DISTINCT number) FROM {table}"
                " GROUP BY repo, rule").fetchall()
            for repo, rule, count, prs in rows:
                entry = counts.setdefault((str(repo), str(rule)), {})
                entry[column] = int(count)
                entry[f"{column}_prs"] = int(prs)
        return counts

    def _effect(self, db: Db, comment_id: int, step: int) -> int | None:
        row = db.execute("SELECT result FROM command_effects WHERE comment_id = ? AND step = ?",
                         (comment_id, step)).fetchone()
        return None if row is None else int(row[0])

    def _record_effect(self, db: Db, comment_id: int, step: int, result: int) -> None:
        db.execute("INSERT INTO command_effects (comment_id, step, result) VALUES (?, ?, ?)",
                   (comment_id, step, result))

    def finish_command(self, comment_id: int) -> None:
        """The comment's effects and reply are recorded: never run it again."""
        with self.db.transaction() as db:
            db.execute("INSERT INTO handled_comments (comment_id, at) VALUES (?, ?)"
                       " ON CONFLICT (comment_id) DO NOTHING", (comment_id, time.time()))
            db.execute("DELETE FROM command_progress WHERE comment_id = ?", (comment_id,))
            db.execute("DELETE FROM command_effects WHERE comment_id = ?", (comment_id,))

    def take_rate(self, comment_id: int, buckets: Sequence[RateBucket], now: float) -> str | None:
        """Count this comment in every bucket, unless one is full: then the full
        bucket's name, and nothing is counted. A retry of a comment already counted
        is allowed again without counting twice."""
        with self.db.transaction() as db:
            if db.postgres:  # replicas counting the same buckets take turns
                db.execute("SELECT pg_advisory_xact_lock(hashtext(?))",
                           ("|".join(b for b, _, _ in buckets),))
            fresh: list[str] = []
            for bucket, limit, window in buckets:
                db.execute("DELETE FROM rate_events WHERE bucket = ? AND at <= ?",
                           (bucket, now - window))
                if db.execute("SELECT 1 FROM rate_events WHERE bucket = ? AND comment_id = ?",
                              (bucket, comment_id)).fetchone() is not None:
                    continue
                (count,) = db.execute("SELECT COUNT(*) FROM rate_events WHERE bucket = ?",
                                      (bucket,)).fetchone()
                if int(count) >= limit:
                    return bucket
                fresh.append(bucket)
            for bucket in fresh:
                db.execute("INSERT INTO rate_events (bucket, comment_id, at) VALUES (?, ?, ?)",
                           (bucket, comment_id, now))
        return None
