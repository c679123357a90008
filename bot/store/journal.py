"""The publication journal's table (both backends): per pull request, each write to
GitHub as an intent recorded before it is sent and its result after
(bot/github/journal.py says what the steps are and how a recovering worker uses them).

Each call is one autocommitted statement, so an intent is durable before the write it
announces leaves the process: on SQLite a SIGKILL cannot lose it, and on PostgreSQL
every replica sees it at once. Only the holder of the PR's lease writes a PR's rows.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from bot.errors import LeaseLost
from bot.github.journal import Entry
from bot.store.base import Store
from bot.store.db import Db


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


class JournalTables:
    db: Db
    owner: str

    def journal_entries(self, repo: str, number: int) -> dict[str, Entry]:
        rows = self.db.execute(
            "SELECT step, intent, result FROM pr_journal WHERE repo = ? AND number = ?",
            (repo, number),
        ).fetchall()
        return {str(step): Entry(json.loads(intent), None if result is None else json.loads(result))
                for step, intent, result in rows}

    def journal_intend(self, repo: str, number: int, step: str, intent: dict[str, Any],
                       held_by: str | None = None) -> None:
        """With `held_by` (the delivery publishing), the intent is recorded only while
        this process's lease on it is valid, in the same statement: a replica whose
        lease ran out cannot announce (and so cannot send) a write another replica may
        be making; it gets `LeaseLost` instead."""
        now = time.time()
        values = (repo, number, step, _dump(intent), now)
        upsert = (" ON CONFLICT (repo, number, step) DO UPDATE SET intent = excluded.intent,"
                  " result = NULL, updated_at = excluded.updated_at")
        columns = "INSERT INTO pr_journal (repo, number, step, intent, result, updated_at)"
        if held_by is None:
            self.db.execute(f"{columns} VALUES (?, ?, ?, ?, NULL, ?){upsert}", values)
            return
        written = self.db.execute(
            f"{columns} SELECT ?, ?, ?, ?, NULL, ? WHERE EXISTS (SELECT 1 FROM deliveries"
            " WHERE id = ? AND status = 'running' AND lease_owner = ? AND lease_until > ?)"
            f"{upsert}", (*values, held_by, self.owner, now)).rowcount
        if written == 0:
            raise LeaseLost(f"delivery {held_by} is no longer leased to this replica; "
                            f"{step} of {repo}#{number} not published")

    def journal_record(self, repo: str, number: int, step: str, result: dict[str, Any]) -> None:
        self.db.execute(
            "INSERT INTO pr_journal (repo, number, step, intent, result, updated_at)"
            " VALUES (?, ?, ?, '{}', ?, ?) ON CONFLICT (repo, number, step) DO UPDATE SET"
            " result = excluded.result, updated_at = excluded.updated_at",
            (repo, number, step, _dump(result), time.time()),
        )

    def journal_clear(self, repo: str, number: int) -> None:
        """Forget the PR's steps: the saved state now says everything they did."""
        self.db.execute("DELETE FROM pr_journal WHERE repo = ? AND number = ?", (repo, number))


@dataclass(frozen=True)
class StoreJournal:
    """One PR's journal in the store, as the publishing flows take it."""

    store: Store
    repo: str
    number: int
    held_by: str | None = None  # the delivery publishing: intents fenced by its lease

    def entries(self) -> dict[str, Entry]:
        return self.store.journal_entries(self.repo, self.number)

    def intend(self, step: str, intent: dict[str, Any]) -> None:
        self.store.journal_intend(self.repo, self.number, step, intent, self.held_by)

    def record(self, step: str, result: dict[str, Any]) -> None:
        self.store.journal_record(self.repo, self.number, step, result)
