"""One connection to SQLite or PostgreSQL behind the same few calls, so the queries
of the store and of the failure index are written once.

Queries use `?` placeholders (sqlite3's style); on PostgreSQL they are rewritten to
psycopg's `%s` once per distinct statement. Statements therefore hold no literal `?`
or `%` (every value is a parameter), which `sql()` checks.

The connection is shared by the event loop and helper threads under a re-entrant
lock (`transaction()` may call `execute()`), as sqlite3 and a psycopg connection
each allow one statement at a time.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

import psycopg

Dialect = Literal["sqlite", "postgresql"]
# What a failing statement raises, whichever the backend.
DB_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, psycopg.Error)


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


def is_postgres_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


def url_password(target: str) -> str | None:
    """The password in a database URL, for the log redaction filter."""
    if not is_postgres_url(target):
        return None
    return urlsplit(target).password or None


def redacted_url(target: str) -> str:
    """The database URL or path without its password, fit for errors and logs."""
    password = url_password(target)
    return target if not password else target.replace(f":{password}@", ":***@", 1)


@lru_cache(maxsize=512)
def _pg_sql(text: str) -> str:
    if "%" in text:
        raise ValueError("a statement must pass every value as a parameter (found '%')")
    return text.replace("?", "%s")


class Db:
    """A connection, its dialect and its lock. Built by `open_sqlite` / `open_postgres`."""

    def __init__(self, dialect: Dialect, conn: Any, reopen: Any = None) -> None:
        self.dialect: Dialect = dialect
        self._conn = conn
        self._reopen = reopen  # PostgreSQL: reconnect after the server dropped us
        self.lock = threading.RLock()

    @property
    def postgres(self) -> bool:
        return self.dialect == "postgresql"

    @property
    def raw(self) -> Any:
        """The driver's connection (sqlite3.Connection or psycopg.Connection)."""
        return self._conn

    def sql(self, text: str) -> str:
        return _pg_sql(text) if self.postgres else text

    def execute(self, text: str, params: Sequence[Any] = ()) -> Cursor:
        with self.lock:
            self._check_connection()
            cursor: Cursor = self._conn.execute(self.sql(text), params)
            return cursor

    def executemany(self, text: str, rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return
        with self.lock:
            self._check_connection()
            if self.postgres:
                self._conn.cursor().executemany(self.sql(text), rows)
            else:
                self._conn.executemany(text, rows)

    def executescript(self, statements: Sequence[str]) -> None:
        with self.lock:
            for statement in statements:
                self._conn.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[Db]:
        """One write transaction, committed on exit, rolled back on an exception.

        SQLite takes the write lock up front (BEGIN IMMEDIATE) so two processes never
        deadlock upgrading a read lock; PostgreSQL locks rows as statements reach them.
        """
        with self.lock:
            self._check_connection()
            if self.postgres:
                with self._conn.transaction():
                    yield self
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def reconnect_if_dropped(self) -> None:
        """For a caller holding `lock` that talks to `raw` itself (PostgreSQL's COPY)."""
        self._check_connection()

    def _check_connection(self) -> None:
        if self.postgres and self._conn.closed and self._reopen is not None and not self.closing:
            # The server restarted or dropped an idle connection: one fresh try.
            self._conn = self._reopen()

    closing = False

    def close(self) -> None:
        with self.lock:
            self.closing = True
            self._conn.close()


def open_postgres(url: str) -> Db:
    """An autocommit psycopg connection (explicit transactions via `transaction()`)."""

    def reopen() -> psycopg.Connection[Any]:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)

    return Db("postgresql", reopen(), reopen)
