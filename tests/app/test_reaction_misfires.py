"""A 👎 on the bot's inline comment by a maintainer counts as a misfire of its rule.

GitHub sends no webhook for reactions: the App reads them at the PR's next review, on
the fake GitHub over real HTTP, and records each (comment, user) once.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.render.markdown import MISFIRE_HINT
from tests.app.e2e_kit import REPO, LiveApp, live_app, pr_payload
from tests.github.kit import push, workflow

WF = ".github/workflows/ci.yml"
OTHER = ".github/workflows/nightly.yml"
LIST_OPS = ("pulls/list-review-comments", "reactions/list-for-pull-request-review-comment",
            "repos/get-collaborator-permission-level")


async def review(app: LiveApp, tag: str, extra: str = "") -> None:
    files = {WF: (workflow(), workflow(silenced=True))}
    if extra:
        files[OTHER] = (workflow(), workflow(silenced=True, extra=extra))
    head = push(app.fake, 7, files, tag=tag)
    action = "opened" if tag == "h1" else "synchronize"
    assert await app.deliver("pull_request", pr_payload(action, 7, head)) == 202
    await app.settle()


def calls(app: LiveApp) -> dict[str, int]:
    return {op: app.fake.count(op) for op in LIST_OPS}


def test_thumbs_down_by_a_maintainer_is_one_misfire_across_reviews(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await review(app, "h1")
            # First review: the bot had no inline comment before it, so nothing is read.
            assert calls(app) == dict.fromkeys(LIST_OPS, 0)
            (inline,) = [c for r in app.fake.reviews(REPO, 7) for c in r.comments]
            assert "silenced-test" in inline.body
            (summary,) = [c for c in app.fake.issue_comments(REPO, 7)
                          if "CI stability review" in c.body]
            assert MISFIRE_HINT in summary.body
            app.fake.set_permission(REPO, "maint", "maintain")
            app.fake.set_permission(REPO, "reader", "read")
            for user in ("maint", "reader"):
                app.fake.react_to_review_comment(inline.id, user, "-1")
            app.fake.react_to_review_comment(inline.id, "maint", "+1")

            await review(app, "h2", extra="# another job\n")
            assert calls(app) == dict.fromkeys(LIST_OPS, 1) | {
                "repos/get-collaborator-permission-level": 2}
            # Unchanged 👎 counts: the next review lists the comments and nothing more.
            await review(app, "h3", extra="# yet another\n")
            assert calls(app) == {LIST_OPS[0]: 2, LIST_OPS[1]: 1, LIST_OPS[2]: 2}
            # A second maintainer's 👎: the list is read again, and the permission of the
            # users not recorded (the reader, then the new one), not the recorded maint's.
            app.fake.set_permission(REPO, "admin1", "admin")
            app.fake.react_to_review_comment(inline.id, "admin1", "-1")
            await review(app, "h4", extra="# and one more\n")
            assert calls(app) == {LIST_OPS[0]: 3, LIST_OPS[1]: 2, LIST_OPS[2]: 4}
            assert app.fake.violations == []
            rows = app.store.db.execute(
                "SELECT rule, reason, by_user FROM misfires ORDER BY by_user").fetchall()
            assert [(r[0], r[2]) for r in rows] == [("silenced-test", "admin1"),
                                                  ("silenced-test", "maint")]
            assert all("👎" in r[1] for r in rows)
    asyncio.run(scenario())
    assert main(["stats", "--db", str(tmp_path / "bot.db"), "--format", "json"]) == 0
    (row,) = [r for r in json.loads(capsys.readouterr().out) if r["rule"] == "silenced-test"]
    assert row["misfires"] == 2 and row["misfires_prs"] == 1


def test_unreadable_reactions_leave_the_review_alone_and_are_read_next_time(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await review(app, "h1")
            (inline,) = [c for r in app.fake.reviews(REPO, 7) for c in r.comments]
            app.fake.set_permission(REPO, "maint", "write")
            app.fake.react_to_review_comment(inline.id, "maint", "-1")
            app.fake.inject("GET", r"/pulls/comments/\d+/reactions$", 404, times=1)
            await review(app, "h2", extra="# another job\n")
            assert len(app.fake.reviews(REPO, 7)) == 2  # the second head's review went out
            assert not app.store.counts().get("dead")
            misfires = "SELECT COUNT(*) FROM misfires"
            assert app.store.db.execute(misfires).fetchone()[0] == 0
            await review(app, "h3", extra="# yet another\n")  # nothing was marked read
            assert app.store.db.execute(misfires).fetchone()[0] == 1
            assert app.fake.count("reactions/list-for-pull-request-review-comment") == 2
    asyncio.run(scenario())
