"""The failure index's schema and its migrations (the `failure_index` row of `ci_schema`).

Version 2 added the root cause's chain; version 3 added, on PostgreSQL, the `pg_trgm`
extension and a GIN trigram index on `ci_jobs.signature` for similar-failure lookups
(bot/evidence/index_similar.py). The extension is optional: when it cannot be created
(not installed, or the role may not create extensions) the index logs a notice and
similar failures are found by the portable method; every later start tries again.
"""

from __future__ import annotations

import logging

from bot.evidence.index_similar import TRIGRAM_INDEX
from bot.store.db import DB_ERRORS, Db

log = logging.getLogger("bot.evidence")

SCHEMA_VERSION = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ci_schema (
    name TEXT PRIMARY KEY, version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ci_runs (
    provider TEXT NOT NULL, run_id TEXT NOT NULL, repo TEXT NOT NULL, pipeline TEXT NOT NULL,
    workflow_path TEXT, branch TEXT, commit_sha TEXT, pr_number INTEGER, url TEXT,
    event TEXT, started_at TEXT, finished_at TEXT, conclusion TEXT,
    jobs_complete INTEGER NOT NULL DEFAULT 0, ingested_at TEXT NOT NULL,
    PRIMARY KEY (provider, run_id)
);
CREATE TABLE IF NOT EXISTS ci_jobs (
    provider TEXT NOT NULL, job_id TEXT NOT NULL, attempt INTEGER NOT NULL,
    run_id TEXT, repo TEXT NOT NULL, pipeline TEXT NOT NULL, workflow_path TEXT,
    job_name TEXT NOT NULL, step TEXT, branch TEXT, commit_sha TEXT, pr_number INTEGER,
    url TEXT, run_url TEXT, started_at TEXT, finished_at TEXT, conclusion TEXT NOT NULL,
    category TEXT, line TEXT, line_no INTEGER, signature TEXT, surface TEXT,
    surface_line_no INTEGER, context TEXT NOT NULL DEFAULT '', mentions TEXT NOT NULL DEFAULT '',
    log_note TEXT, ingested_at TEXT NOT NULL, chain TEXT,
    PRIMARY KEY (provider, job_id, attempt)
);
CREATE INDEX IF NOT EXISTS ci_jobs_repo_time ON ci_jobs (repo, finished_at);
CREATE INDEX IF NOT EXISTS ci_jobs_signature ON ci_jobs (repo, signature);
CREATE INDEX IF NOT EXISTS ci_jobs_commit ON ci_jobs (repo, commit_sha);
CREATE INDEX IF NOT EXISTS ci_jobs_name ON ci_jobs (repo, job_name);
CREATE TABLE IF NOT EXISTS ci_cursors (
    source TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at TEXT NOT NULL
);
"""


class FailureIndexError(Exception):
    """The index database cannot be opened or has a newer schema than this code."""


def migrate(db: Db, where: str) -> bool:
    """Create or upgrade the tables; True when pg_trgm's index serves similar failures."""
    with db.transaction():
        if db.postgres:  # replicas starting together create the tables once
            db.execute("SELECT pg_advisory_xact_lock(hashtext('ci_schema'))")
        db.executescript([s for s in _SCHEMA.split(";") if s.strip()])
        row = db.execute("SELECT version FROM ci_schema WHERE name = 'failure_index'").fetchone()
        version = SCHEMA_VERSION if row is None else int(row[0])
        if version > SCHEMA_VERSION:
            raise FailureIndexError(
                f"the failure index at {where} has schema version {version}, "
                f"newer than this program's {SCHEMA_VERSION}"
            )
        if version == 1:
            db.execute("ALTER TABLE ci_jobs ADD COLUMN chain TEXT")
        # Version 3's trigram index is (re)tried below on every start: it depends on an
        # extension an administrator may install later, and SQLite has nothing to add.
        db.execute(
            "INSERT INTO ci_schema (name, version) VALUES ('failure_index', ?)"
            " ON CONFLICT (name) DO UPDATE SET version = excluded.version",
            (SCHEMA_VERSION,),
        )
        return _trigram_index(db, where) if db.postgres else False


def _trigram_index(db: Db, where: str) -> bool:
    """Inside the migration's transaction (and its advisory lock)."""
    if _has_trigram_index(db):
        return True
    try:
        with db.raw.transaction():  # a savepoint: a refusal must not abort the migration
            db.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            # On LOWER(signature), not the column: pg_trgm's GIN operator class also
            # answers `=`, and the planner then picked it for the exact `signature IN
            # (...)` lookups of bot/evidence/lookup.py (measured 100x slower than a scan).
            # Trigrams are lower-cased anyway, so the similarity is the same.
            db.execute(f"CREATE INDEX IF NOT EXISTS {TRIGRAM_INDEX} "
                       "ON ci_jobs USING gin (LOWER(signature) gin_trgm_ops)")
    except DB_ERRORS as exc:
        log.warning("the failure index at %s cannot use pg_trgm (%s); similar failures are "
                    "found by the portable method", where, str(exc).strip().splitlines()[0])
        return False
    return _has_trigram_index(db)


def _has_trigram_index(db: Db) -> bool:
    row = db.execute(
        "SELECT 1 FROM pg_indexes WHERE indexname = ? AND tablename = 'ci_jobs'"
        " AND schemaname = current_schema()", (TRIGRAM_INDEX,)).fetchone()
    return row is not None
