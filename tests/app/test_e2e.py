"""End to end: signed real webhooks → the App → the fake GitHub, with the real rules."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.app.e2e_kit import REPO, LiveApp, comment_payload, live_app, pr_payload
from tests.github.kit import push, workflow

WF = ".github/workflows/ci.yml"


def run(coro: object) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


async def open_pr(app: LiveApp, number: int = 7, *, silenced: bool = True) -> str:
    head = push(app.fake, number, {WF: (workflow(), workflow(silenced=silenced))}, tag="h1")
    assert await app.deliver("pull_request", pr_payload("opened", number, head)) == 202
    await app.settle()
    return head


def test_opened_gets_check_review_and_summary(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            head = await open_pr(app)
            fake = app.fake
            (check,) = fake.check_runs(REPO, head)
            assert check.name == "CI stability review" and check.status == "completed"
            assert check.conclusion == "neutral"  # a warning, no error
            (review,) = fake.reviews(REPO, 7)
            assert review.state == "COMMENTED"
            assert any("silenced-test" in c.body or "continue-on-error" in c.body
                       for c in review.comments)
            (summary,) = fake.issue_comments(REPO, 7)
            assert "<!-- ci-stability:summary -->" in summary.body
            assert "silenced-test" in summary.body
            assert fake.violations == []
    run(scenario())


def test_fix_pushed_resolves_without_duplicates(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await open_pr(app)
            head2 = push(app.fake, 7, {WF: (workflow(), workflow(silenced=False,
                                                                  extra="# tidy\n"))},
                         tag="h2")
            assert await app.deliver("pull_request", pr_payload("synchronize", 7, head2)) == 202
            await app.settle()
            fake = app.fake
            (check,) = fake.check_runs(REPO, head2)
            assert check.conclusion == "success"
            assert len(fake.reviews(REPO, 7)) == 1  # nothing new to comment on
            (summary,) = fake.issue_comments(REPO, 7)  # edited in place, not a second one
            assert "resolved" in summary.body.lower()
            assert fake.violations == []
    run(scenario())


def test_same_delivery_twice_gives_one_review(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            head = push(app.fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
            data = pr_payload("opened", 7, head)
            assert await app.deliver("pull_request", data, delivery_id="d-1") == 202
            await app.settle()
            assert await app.deliver("pull_request", data, delivery_id="d-1") == 200
            await app.settle()
            assert len(app.fake.reviews(REPO, 7)) == 1
            assert len(app.fake.issue_comments(REPO, 7)) == 1
    run(scenario())


def test_bad_signature_is_401_and_nothing_is_stored(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            head = push(app.fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
            status = await app.deliver("pull_request", pr_payload("opened", 7, head),
                                       delivery_id="forged", secret="not-the-secret")
            assert status == 401
            assert app.store.get_delivery("forged") is None
            assert app.fake.writes() == []
    run(scenario())


def test_faults_still_publish_exactly_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            fake = app.fake
            fake.inject("GET", r"/pulls/7/files|/compare/", status=502, times=2)
            fake.inject_secondary_rate_limit("POST", r"/check-runs$", retry_after=1, times=1)
            fake.inject_delay("GET", r"/pulls/7$", seconds=5, times=1)  # a client timeout
            await open_pr(app)
            assert len(fake.reviews(REPO, 7)) == 1
            assert len(fake.issue_comments(REPO, 7)) == 1
            assert len([c for c in fake.check_runs(REPO) if c.status == "completed"]) == 1
            assert fake.violations == []
    run(scenario())


def test_clean_pr_gets_only_a_green_check(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            head = await open_pr(app, silenced=False)
            (check,) = app.fake.check_runs(REPO, head)
            assert check.conclusion == "success"
            assert app.fake.reviews(REPO, 7) == []
            assert app.fake.issue_comments(REPO, 7) == []
    run(scenario())


def test_ignore_from_read_only_user_is_refused_with_a_reply(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await open_pr(app)
            app.fake.set_permission(REPO, "reader", "read")
            body = "/stability ignore silenced-test -- known flaky, see #12"
            await app.deliver("issue_comment", comment_payload(7, body, "reader", comment_id=91))
            await app.settle()
            replies = [c for c in app.fake.issue_comments(REPO, 7) if "Sorry" in c.body]
            assert len(replies) == 1 and "write, maintain or admin" in replies[0].body
            assert app.store.list_waivers(REPO, 7) == []
    run(scenario())


def test_ignore_from_maintainer_records_waiver_and_reevaluates(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            head = await open_pr(app)
            app.fake.set_permission(REPO, "maint", "maintain")
            body = "/stability ignore silenced-test -- tracked in #12, fix next sprint"
            await app.deliver("issue_comment", comment_payload(7, body, "maint", comment_id=92))
            await app.settle()
            (waiver,) = app.store.list_waivers(REPO, 7)
            assert waiver.by == "maint" and "tracked in #12" in waiver.reason
            latest = app.fake.check_runs(REPO, head)[-1]
            assert latest.conclusion == "success"
            assert "maint" in (latest.output.get("summary") or "")
            assert any("Waived" in c.body for c in app.fake.issue_comments(REPO, 7))
            assert app.fake.violations == []
    run(scenario())


def test_comment_by_a_bot_is_ignored(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await open_pr(app)
            before = len(app.fake.writes())
            data = comment_payload(7, "/stability review", "other-bot[bot]", user_type="Bot")
            await app.deliver("issue_comment", data)
            await app.settle()
            assert len(app.fake.writes()) == before
    run(scenario())


def test_help_and_explain_reply_and_react(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await open_pr(app)
            data = comment_payload(7, "/stability help\n/stability explain dedup-note", "dev",
                                   comment_id=93)
            await app.deliver("issue_comment", data)
            await app.deliver("issue_comment", data)  # a second delivery of the same comment
            await app.settle()
            replies = [c for c in app.fake.issue_comments(REPO, 7) if "dedup-note" in c.body
                       and "commands" in c.body]
            assert len(replies) == 1
    run(scenario())
