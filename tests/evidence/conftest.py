"""The failure index on each backend, for the tests that run on both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.evidence.index import SqlFailureIndex, open_failure_index


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlFailureIndex]:
    """A fresh index on a real SQLite file, then on the session's real PostgreSQL."""
    target = request.getfixturevalue("pg_url") if request.param == "postgresql" else (
        str(tmp_path / "ci.db"))
    opened = open_failure_index(target)
    yield opened
    opened.close()
