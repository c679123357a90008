"""The failure index: CI runs and jobs (failing *and* passing) with their root causes.

Passing jobs are kept because only they tell a flaky failure (failed, then passed on
the same commit) from a broken one. Callers depend on the `FailureIndex` protocol;
`SqlFailureIndex` runs the same queries on SQLite (`SqliteFailureIndex`, the embedded
default) and PostgreSQL (`PostgresFailureIndex`, beside the replicas' store), through
bot/store/db.py; `open_failure_index` picks by the target. Its tables carry a `ci_`
prefix and their own schema-version row, so they can share a database with the App's
store without either migration touching the other (schema: index_schema.py). Similar
failures (near-duplicate signatures) come from pg_trgm on PostgreSQL and from the same
measure computed in Python elsewhere (index_similar.py). No method reads the clock:
times come in as arguments.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.evidence.index_query import (
    JOB_COLUMNS,
    column_value,
    job_from_row,
    job_select_sql,
    job_where,
)
from bot.evidence.index_schema import SCHEMA_VERSION, FailureIndexError, migrate
from bot.evidence.index_similar import DEFAULT_THRESHOLD, portable_similar, trigram_similar
from bot.evidence.records import (
    FAILED,
    PASSED,
    PROVIDERS,
    Coverage,
    FailureIndex,
    JobQuery,
    JobRecord,
    RunRecord,
    SimilarFailure,
    from_text,
    to_text,
)
from bot.store.db import DB_ERRORS, Db, is_postgres_url, open_postgres, redacted_url

__all__ = [
    "FAILED", "PASSED", "PROVIDERS", "SCHEMA_VERSION", "Coverage", "FailureIndex",
    "FailureIndexError", "JobQuery", "JobRecord", "PostgresFailureIndex", "RunRecord",
    "SimilarFailure", "SqlFailureIndex", "SqliteFailureIndex", "from_text", "open_failure_index",
    "to_text",
]


# Context and mentions are stored one per line; a log line holds no newline.
_RUN_COLUMNS = [f.name for f in fields(RunRecord)]
# Columns a later, sparser report (a job webhook after a backfill) must not blank out.
_KEEP_IF_NULL = {
    "workflow_path", "branch", "commit_sha", "pr_number", "url", "run_url", "event",
    "started_at", "run_id", "step",
    # A re-delivery whose log could not be fetched keeps the earlier analysis.
    "category", "line", "line_no", "signature", "surface", "surface_line_no", "chain",
}
_KEEP_IF_EMPTY = {"context", "mentions"}


def open_failure_index(target: str | Path) -> SqlFailureIndex:
    """PostgreSQL for a `postgresql://` URL, else a SQLite file at that path."""
    if is_postgres_url(str(target)):
        return PostgresFailureIndex(str(target))
    return SqliteFailureIndex(target)


class SqlFailureIndex:
    """`FailureIndex` on either backend; safe to share across threads."""

    def __init__(self, db: Db, where: str) -> None:
        self._db = db
        self.path = where
        self._migrate()

    def _migrate(self) -> None:
        self.trigram = migrate(self._db, self.path)

    def close(self) -> None:
        self._db.close()

    # -- writes ---------------------------------------------------------------------------
    def upsert_run(self, run: RunRecord, *, now: datetime) -> None:
        values = {name: column_value(getattr(run, name)) for name in _RUN_COLUMNS}
        values["ingested_at"] = to_text(now)
        self._upsert("ci_runs", values, ("provider", "run_id"))

    def upsert_job(self, job: JobRecord, *, now: datetime) -> None:
        values = {name: column_value(getattr(job, name)) for name in JOB_COLUMNS}
        values["ingested_at"] = to_text(now)
        self._upsert("ci_jobs", values, ("provider", "job_id", "attempt"))

    def _upsert(self, table: str, values: dict[str, Any], key: tuple[str, ...]) -> None:
        names = list(values)
        updates = []
        for name in names:
            if name in key:
                continue
            if name in _KEEP_IF_NULL:
                updates.append(f"{name} = COALESCE(excluded.{name}, {table}.{name})")
            elif name in _KEEP_IF_EMPTY:
                updates.append(f"{name} = COALESCE(NULLIF(excluded.{name}, ''), {table}.{name})")
            elif name == "jobs_complete":
                greatest = "GREATEST" if self._db.postgres else "MAX"
                updates.append(f"{name} = {greatest}(excluded.{name}, {table}.{name})")
            else:
                updates.append(f"{name} = excluded.{name}")
        sql = (
            f"INSERT INTO {table} ({', '.join(names)}) "
            f"VALUES ({', '.join('?' for _ in names)}) "
            f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {', '.join(updates)}"
        )
        self._db.execute(sql, [values[n] for n in names])

    def prune(self, older_than: datetime) -> int:
        """Delete runs and jobs that finished (or, unfinished, were ingested) before then."""
        cutoff = to_text(older_than)
        with self._db.transaction() as db:
            deleted = db.execute(
                "DELETE FROM ci_jobs WHERE COALESCE(finished_at, ingested_at) < ?", (cutoff,)
            ).rowcount
            db.execute(
                "DELETE FROM ci_runs WHERE COALESCE(finished_at, ingested_at) < ?", (cutoff,)
            )
        return int(deleted)

    def set_cursor(self, source: str, value: str, *, now: datetime) -> None:
        self._db.execute(
            "INSERT INTO ci_cursors (source, value, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (source) DO UPDATE SET value = excluded.value, "
            "updated_at = excluded.updated_at",
            (source, value, to_text(now)),
        )

    # -- reads ----------------------------------------------------------------------------
    def get_cursor(self, source: str) -> str | None:
        row = self._db.execute(
            "SELECT value FROM ci_cursors WHERE source = ?", (source,)
        ).fetchone()
        return None if row is None else str(row[0])

    def has_job(self, provider: str, job_id: str, attempt: int) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM ci_jobs WHERE provider = ? AND job_id = ? AND attempt = ?",
            (provider, job_id, attempt),
        ).fetchone()
        return row is not None

    def run_complete(self, provider: str, run_id: str) -> bool:
        row = self._db.execute(
            "SELECT jobs_complete FROM ci_runs WHERE provider = ? AND run_id = ?",
            (provider, run_id),
        ).fetchone()
        return bool(row and row[0])

    def has_run(self, provider: str, run_id: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM ci_runs WHERE provider = ? AND run_id = ?", (provider, run_id)
        ).fetchone()
        return row is not None

    def jobs(self, query: JobQuery) -> list[JobRecord]:
        """Matching jobs, newest first; run-level PR numbers fill in what jobs lack."""
        where, params = job_where(query, self._db.postgres)
        sql = job_select_sql(where)
        rows = self._db.execute(sql, [*params, max(query.limit, 0)]).fetchall()
        return [job_from_row(row) for row in rows]

    def similar_failures(self, text: str, query: JobQuery | None = None, *,
                         threshold: float = DEFAULT_THRESHOLD, portable: bool = False
                         ) -> list[SimilarFailure]:
        """Failing jobs (within `query`'s filters) whose signature is at least `threshold`
        similar to `text` (a signature), most similar first, at most `query.limit`.

        pg_trgm's index on PostgreSQL when the extension is there, else (or with
        `portable`, for comparisons) the same measure computed here.
        """
        return self.similar_failures_many([text], query, threshold=threshold,
                                          portable=portable)[0]

    def similar_failures_many(self, texts: Sequence[str], query: JobQuery | None = None, *,
                              threshold: float = DEFAULT_THRESHOLD, portable: bool = False
                              ) -> list[list[SimilarFailure]]:
        """`similar_failures` of each text, in order; the portable method reads and
        trigrams the window's signatures once for all of them."""
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"a similarity threshold is between 0 and 1, not {threshold}")
        query = query if query is not None else JobQuery()
        limit = max(query.limit, 0)
        if not texts:
            return []
        if self.trigram and not portable:
            return [trigram_similar(self._db, text, query, threshold, limit) for text in texts]
        return portable_similar(self._db, texts, query, threshold, limit)

    def coverage(self, repo: str | None = None) -> Coverage:
        sql = (
            "SELECT COUNT(*), SUM(CASE WHEN conclusion = 'failure' THEN 1 ELSE 0 END),"
            " MIN(COALESCE(finished_at, ingested_at)),"
            " MAX(COALESCE(finished_at, ingested_at)) FROM ci_jobs"
        )
        params: list[Any] = []
        if repo is not None:
            sql += " WHERE LOWER(repo) = LOWER(?)"  # GitHub names are case-insensitive
            params.append(repo)
        count, failures, oldest, newest = self._db.execute(sql, params).fetchone()
        return Coverage(int(count or 0), int(failures or 0), from_text(oldest), from_text(newest))


class SqliteFailureIndex(SqlFailureIndex):
    """The embedded index: stdlib sqlite3 in WAL mode (may share the App's file)."""

    def __init__(self, path: str | Path) -> None:
        where = str(path)
        try:
            conn = sqlite3.connect(where, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=5000")
            super().__init__(Db("sqlite", conn), where)
        except sqlite3.Error as exc:
            raise FailureIndexError(f"cannot open the failure index at {where}: {exc}") from exc


class PostgresFailureIndex(SqlFailureIndex):
    """The index in the replicas' PostgreSQL database (its own connection)."""

    def __init__(self, url: str) -> None:
        where = redacted_url(url)
        try:
            super().__init__(open_postgres(url), where)
        except DB_ERRORS as exc:
            raise FailureIndexError(f"cannot open the failure index at {where}: "
                                    f"{str(exc).strip()}") from None
