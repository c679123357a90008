"""The machine's real PostgreSQL for tests: one fresh database per test session.

`CI_STABILITY_TEST_PG` names the server's maintenance database (default: the local
server's `test` database, trust auth). A session creates `cistab_<pid>_<random>`,
and drops it at the end. Tests that need it skip when no server answers, except
under CI (`CI` set), where an unreachable PostgreSQL is a failure, never a skip.
"""

from __future__ import annotations

import os
import uuid
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

ADMIN_URL = os.environ.get("CI_STABILITY_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
TABLES = ("deliveries", "inbox", "pr_state", "pr_leases", "pr_journal", "waivers",
          "handled_comments", "command_log", "command_progress", "command_effects",
          "rate_events", "misfires")


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


class PgServer:
    """Creates the session's database on first use; `url()` empties its tables."""

    def __init__(self, admin_url: str = ADMIN_URL) -> None:
        self.admin_url = admin_url
        self.name = f"cistab_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self._created = False
        self._problem: str | None = None

    def database_url(self) -> str:
        """The session database's URL (created if needed), tables untouched."""
        if self._problem is not None:
            _unavailable(self._problem)
        if not self._created:
            try:
                with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as c:
                    c.execute(f'CREATE DATABASE "{self.name}"')
            except psycopg.Error as exc:
                self._problem = f"PostgreSQL at {self.admin_url} is not usable: {exc}"
                _unavailable(self._problem)
            self._created = True
        return _with_database(self.admin_url, self.name)

    def url(self) -> str:
        """The session database's URL with the store's tables emptied (a fresh store)."""
        url = self.database_url()
        with psycopg.connect(url, autocommit=True) as conn:
            existing = {row[0] for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
            tables = [t for t in existing if t in TABLES or t.startswith("ci_")]
            if tables:
                conn.execute(f"TRUNCATE {', '.join(tables)}")
        return url

    def drop(self) -> None:
        if not self._created:
            return
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason + " (under CI a test that needs it fails instead of skipping)")
    pytest.skip(reason)
