"""Schema migrations, applied in order at `connect()`, tracked by `PRAGMA user_version`.

To add tables (the CI failure index, say), append ONE new tuple of SQL statements to
`MIGRATIONS`; never edit or reorder a tuple that has shipped, because databases in
the field have already recorded it as applied. Entry `i` brings the schema to
version `i + 1`. Each migration runs in its own `BEGIN IMMEDIATE` transaction, so a
failure leaves the database at the previous version and two processes starting
together cannot both apply it (bot/store/migration_runner.py, shared with PostgreSQL).

The PostgreSQL store carries its own equivalent list (bot/store/pg_migrations.py):
a change here needs its counterpart there, and the queries (bot/store/sql.py) are
shared, so keep column names and meanings identical; plain types, explicit indexes,
no triggers.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from bot.store.db import Db
from bot.store.migration_runner import Migration, run_migrations, schema_version_of

MIGRATIONS: Final[list[Migration]] = [
    # 1: the durable webhook queue, per-PR state, waivers, command bookkeeping.
    (
        """CREATE TABLE deliveries (
            id TEXT PRIMARY KEY,
            event TEXT NOT NULL,
            action TEXT,
            payload BLOB NOT NULL,
            payload_encoding TEXT NOT NULL DEFAULT 'identity',
            received_at REAL NOT NULL,
            not_before REAL NOT NULL,
            group_key TEXT,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            updated_at REAL NOT NULL
        )""",
        "CREATE INDEX deliveries_runnable ON deliveries (status, not_before, received_at)",
        "CREATE INDEX deliveries_group ON deliveries (group_key, received_at)",
        """CREATE TABLE pr_state (
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            state TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (repo, number)
        )""",
        """CREATE TABLE waivers (
            id INTEGER PRIMARY KEY,
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            rule TEXT NOT NULL,
            path TEXT,
            reason TEXT NOT NULL,
            by_user TEXT NOT NULL,
            at REAL NOT NULL
        )""",
        "CREATE INDEX waivers_pr ON waivers (repo, number, rule)",
        "CREATE TABLE handled_comments (comment_id INTEGER PRIMARY KEY, at REAL NOT NULL)",
        "CREATE TABLE command_log (user TEXT NOT NULL, at REAL NOT NULL)",
        "CREATE INDEX command_log_user ON command_log (user, at)",
    ),
    # 2: leased claims (a replica that dies loses its claims when the lease runs out) and
    # one review of a PR at a time, across processes.
    (
        "ALTER TABLE deliveries ADD COLUMN lease_owner TEXT",
        "ALTER TABLE deliveries ADD COLUMN lease_until REAL",
        "CREATE INDEX deliveries_lease ON deliveries (status, lease_until)",
        """CREATE TABLE pr_leases (
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            holder TEXT NOT NULL,
            until REAL NOT NULL,
            PRIMARY KEY (repo, number)
        )""",
    ),
    # 3: durable slash commands (progress and effects per comment, so a retry resumes
    # without a second waiver or reply) and rate limits on what the bot writes.
    (
        """CREATE TABLE command_progress (
            comment_id INTEGER PRIMARY KEY, state TEXT NOT NULL, updated_at REAL NOT NULL
        )""",
        """CREATE TABLE command_effects (
            comment_id INTEGER NOT NULL, step INTEGER NOT NULL, result INTEGER NOT NULL,
            PRIMARY KEY (comment_id, step)
        )""",
        """CREATE TABLE rate_events (
            bucket TEXT NOT NULL, comment_id INTEGER NOT NULL, at REAL NOT NULL,
            PRIMARY KEY (bucket, comment_id)
        )""",
        "CREATE INDEX rate_events_at ON rate_events (bucket, at)",
        # Maintainers' false-positive verdicts (`/stability misfire`), for `stats`.
        """CREATE TABLE misfires (
            id INTEGER PRIMARY KEY,
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            rule TEXT NOT NULL,
            reason TEXT,
            by_user TEXT NOT NULL,
            at REAL NOT NULL
        )""",
        "CREATE INDEX misfires_rule ON misfires (repo, rule)",
    ),
    # 4: the publication journal: each write to GitHub about a PR, as an intent before
    # it is sent and a result after (bot/store/journal.py).
    (
        """CREATE TABLE pr_journal (
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            step TEXT NOT NULL,
            intent TEXT NOT NULL,
            result TEXT,
            updated_at REAL NOT NULL,
            PRIMARY KEY (repo, number, step)
        )""",
    ),
    # 5: 👎 reactions on the bot's inline comments as misfire verdicts: the 👎 count last
    # read per comment (unchanged counts are not listed again) and each (comment, user)
    # counted once (bot/store/reaction_tables.py).
    (
        """CREATE TABLE reaction_reads (
            repo TEXT NOT NULL, comment_id INTEGER NOT NULL, number INTEGER NOT NULL,
            thumbs_down INTEGER NOT NULL, PRIMARY KEY (repo, comment_id)
        )""",
        """CREATE TABLE reaction_verdicts (
            repo TEXT NOT NULL, comment_id INTEGER NOT NULL, by_user TEXT NOT NULL,
            PRIMARY KEY (repo, comment_id, by_user)
        )""",
    ),
    # 6: the intake inbox (bot/store/inbox.py): a verified delivery as it arrived, its
    # primary key the only index, until the promoter moves it into `deliveries`.
    (
        """CREATE TABLE inbox (
            id TEXT PRIMARY KEY,
            event TEXT NOT NULL,
            action TEXT,
            payload BLOB NOT NULL,
            payload_encoding TEXT NOT NULL,
            received_at REAL NOT NULL,
            not_before REAL NOT NULL
        )""",
    ),
]


def schema_version(conn: sqlite3.Connection) -> int:
    return schema_version_of(Db("sqlite", conn))


def apply_migrations(conn: sqlite3.Connection, migrations: list[Migration] | None = None) -> int:
    """Bring the schema up to date; returns the resulting version.

    `conn` must be in autocommit mode (isolation_level=None) so that the explicit
    transactions of the runner (bot/store/migration_runner.py) are the only ones.
    """
    return run_migrations(Db("sqlite", conn), MIGRATIONS if migrations is None else migrations)
