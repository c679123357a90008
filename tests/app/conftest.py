"""The App's store on each backend, for the tests that run on both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store import SqlStore, connect, open_store


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlStore]:
    """A fresh store on a real SQLite file, then on the session's real PostgreSQL (a
    module that needs several connections to one database defines its own)."""
    if request.param == "postgresql":
        s: SqlStore = open_store(request.getfixturevalue("pg_url"))
    else:
        s = connect(tmp_path / "bot.db")
    yield s
    s.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The database `serve` processes are pointed at: a SQLite file, then the session's
    real PostgreSQL (for tests that start real processes on one database)."""
    if request.param == "sqlite":
        return str(tmp_path / "app.db")
    return str(request.getfixturevalue("pg_url"))
