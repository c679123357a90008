"""Shared test helpers: build snapshots the way the real sources do."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from bot.core.snapshot import PullRequestSnapshot
from bot.sources.prjson import snapshot_from_pr_data
from tests.pg import PgServer

# No per-example deadline anywhere: a shared, loaded CI machine must not turn a slow
# example into a failure (timing belongs in bench/). On CI the examples are also
# derandomized, so a run is reproducible; locally they keep exploring.
settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


def make_snapshot(
    files: list[dict[str, Any]],
    title: str = "",
    body: str = "",
    patch_only: bool = False,
) -> PullRequestSnapshot:
    """Files as {path, base?, head?, patch?, status?, previous_path?}; `patch_only` drops
    full texts.

    Dropping the texts (after the patch is derived from them) checks that a rule
    works from the patch alone, as it must when GitHub omits contents.
    """
    from bot.sources.files import synthesize_patch

    entries = []
    for spec in files:
        base, head = spec.get("base"), spec.get("head")
        status = spec.get("status") or (
            "added" if base is None and head is not None
            else "removed" if head is None and base is not None
            else "modified"
        )
        patch = spec.get("patch")
        if patch is None and (base is not None or head is not None):
            patch = synthesize_patch(base, head)
        entry: dict[str, Any] = {"filename": spec["path"], "status": status, "patch": patch}
        if spec.get("previous_path"):
            entry["previous_filename"] = spec["previous_path"]
        if not patch_only:
            entry["contents"] = {"base": base, "head": head}
        entries.append(entry)
    return snapshot_from_pr_data({"title": title, "body": body, "files": entries})


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The real PostgreSQL, one fresh database per session (tests/pg.py)."""
    server = PgServer()
    yield server
    server.drop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A `postgresql://` URL of the session database with the store's tables empty."""
    return pg_server.url()
