"""`/stability misfire <rule>`: a maintainer's false-positive verdict, recorded once,
only against a finding the PR has; `ci-stability stats` counts them per rule."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.app.e2e_kit import REPO, LiveApp, comment_payload, live_app, pr_payload
from tests.github.kit import push, workflow

WF = ".github/workflows/ci.yml"


async def open_pr(app: LiveApp) -> None:
    head = push(app.fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
    assert await app.deliver("pull_request", pr_payload("opened", 7, head)) == 202
    await app.settle()


def test_misfire_is_recorded_once_and_counted_by_stats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await open_pr(app)
            app.fake.set_permission(REPO, "maint", "maintain")
            body = ("/stability misfire silenced-test -- the step only uploads a report\n"
                    "/stability misfire dedup-note\n")
            data = comment_payload(7, body, "maint", comment_id=901)
            await app.deliver("issue_comment", data)
            await app.deliver("issue_comment", data)  # redelivered: still one verdict
            app.fake.set_permission(REPO, "reader", "read")
            await app.deliver("issue_comment", comment_payload(
                7, "/stability misfire silenced-test", "reader", comment_id=902))
            await app.settle()
            replies = [c.body for c in app.fake.issue_comments(REPO, 7) if "misfire" in c.body]
            assert any("Recorded a misfire of `silenced-test`" in r for r in replies)
            assert any("no `dedup-note` finding" in r for r in replies)
            assert any("Sorry @reader" in r for r in replies)
    asyncio.run(scenario())
    db = str(tmp_path / "bot.db")
    assert main(["stats", "--db", db, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    (row,) = [r for r in rows if r["rule"] == "silenced-test"]
    assert row["repo"] == REPO and row["misfires"] == 1 and row["findings"] >= 1
    assert all(r["misfires"] == 0 for r in rows if r["rule"] != "silenced-test")
    assert main(["stats", "--db", db]) == 0
    assert "misfires by rule: silenced-test 1" in capsys.readouterr().out


def test_stats_without_a_database_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["stats", "--db", str(tmp_path / "none.db")]) == 2
    assert "no database" in capsys.readouterr().err
