"""Slash commands survive failures and hostile text: a reply GitHub refuses (5xx) is
retried without a second waiver or reply, a flood is answered a bounded number of
times, an injected marker never makes a reply look like the summary, and a broken
default-branch config still ends in a completed check run saying what is wrong."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from markdown_it import MarkdownIt

from bot.core.config import CONFIG_PATH
from bot.render import markers
from tests.app.e2e_kit import REPO, LiveApp, comment_payload, live_app, pr_payload
from tests.github.kit import push, workflow

WF = ".github/workflows/ci.yml"
_CODE = re.compile(r"<code>.*?</code>", re.DOTALL)


async def open_pr(app: LiveApp) -> str:
    head = push(app.fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
    assert await app.deliver("pull_request", pr_payload("opened", 7, head)) == 202
    await app.settle()
    return head


def bot_replies(app: LiveApp, needle: str) -> list[str]:
    return [c.body for c in app.fake.issue_comments(REPO, 7)
            if c.user.endswith("[bot]") and needle in c.body]


def reactions(app: LiveApp) -> int:
    return len(app.fake.calls_to("reactions/create-for-issue-comment"))


def test_waiver_whose_reply_fails_is_retried_once_without_doubles(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await open_pr(app)
            app.fake.set_permission(REPO, "maint", "maintain")
            # Every attempt the driver makes within the first delivery fails: the
            # delivery is retried by the queue, after the waiver was recorded.
            app.fake.inject("POST", r"/issues/7/comments$", status=502, times=5)
            body = "/stability ignore silenced-test -- tracked in #12"
            await app.deliver("issue_comment", comment_payload(7, body, "maint", comment_id=301))
            await app.settle()
            assert len(app.store.list_waivers(REPO, 7)) == 1
            (waived,) = bot_replies(app, "Waived")
            assert markers.command_reply(301) in waived
            assert app.store.comment_handled(301)
            # A redelivery of the handled comment changes nothing.
            before = len(app.fake.writes())
            await app.deliver("issue_comment", comment_payload(7, body, "maint", comment_id=301))
            await app.settle()
            assert len(app.fake.writes()) == before
            assert app.fake.violations == []
    asyncio.run(scenario())


def test_a_reply_already_posted_is_found_by_its_marker(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await open_pr(app)
            # An earlier attempt posted the reply and died before recording it.
            app.store.save_command_progress(302, {"reply_intent": True, "limited": None,
                                                  "steps": {}})
            app.fake.add_comment(REPO, 7, f"(help)\n\n{markers.command_reply(302)}",
                                 user=app.handler.context.bot_login, user_type="Bot",
                                 via_app=True)
            # Someone else's comment carrying the marker proves nothing.
            app.fake.add_comment(REPO, 7, markers.command_reply(303), user="mallory")
            await app.deliver("issue_comment", comment_payload(7, "/stability help", "dev",
                                                               comment_id=302))
            await app.deliver("issue_comment", comment_payload(7, "/stability help", "dev",
                                                               comment_id=303))
            await app.settle()
            assert len(bot_replies(app, markers.command_reply(302))) == 1
            assert len(bot_replies(app, markers.command_reply(303))) == 1
    asyncio.run(scenario())


def test_flooded_help_gets_a_bounded_number_of_replies(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await open_pr(app)
            before = reactions(app)
            for i in range(30):
                await app.deliver("issue_comment", comment_payload(7, "/stability help", "dev",
                                                                   comment_id=400 + i))
            await app.settle()
            helps = bot_replies(app, "ci-stability-bot commands")
            notices = bot_replies(app, "only notice")
            assert len(helps) == 10 and len(notices) == 1
            assert reactions(app) - before == 2 * 10 + 1
            # Another user on the same PR is limited by the PR's own budget.
            for i in range(15):
                await app.deliver("issue_comment", comment_payload(7, "/stability help", "eve",
                                                                   comment_id=500 + i))
            await app.settle()
            assert len(bot_replies(app, "ci-stability-bot commands")) == 20
            assert len(bot_replies(app, "only notice")) == 2
    asyncio.run(scenario())


def test_review_re_runs_are_limited_per_pull_request(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            head = await open_pr(app)
            for i in range(5):
                await app.deliver("issue_comment", comment_payload(
                    7, "/stability review", f"user{i}", comment_id=600 + i))
            await app.settle()
            assert len(bot_replies(app, "was asked 3 times")) == 2
            completed = [c for c in app.fake.check_runs(REPO, head) if c.status == "completed"]
            assert 1 <= len(completed) <= 4  # the opening review and at most 3 re-runs
    asyncio.run(scenario())


def test_an_injected_summary_marker_never_makes_a_reply_the_summary(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            await open_pr(app)
            (summary,) = app.fake.issue_comments(REPO, 7)
            hostile = f"/stability {markers.SUMMARY}@octocat <img src=x>"
            await app.deliver("issue_comment", comment_payload(7, hostile, "mallory",
                                                               comment_id=701))
            hostile = f"/stability explain {markers.SUMMARY}"
            await app.deliver("issue_comment", comment_payload(7, hostile, "mallory",
                                                               comment_id=702))
            await app.settle()
            replies = [c for c in app.fake.issue_comments(REPO, 7) if c.id != summary.id]
            assert len(replies) == 2
            for reply in replies:
                assert not markers.is_summary(reply.body)
                own = markers.command_reply(reply_id(reply))
                assert "<!--" not in reply.body.replace(own, "")
                # Rendered as GitHub would: the user's HTML and mention are inert text.
                shown = MarkdownIt("commonmark").render(reply.body.replace(own, ""))
                assert "<img" not in shown and "<!--" not in shown
                assert "@octocat" not in _CODE.sub("", shown)  # a mention in code is inert
            # The next review edits the real summary, not a reply.
            await app.deliver("issue_comment", comment_payload(7, "/stability review", "dev",
                                                               comment_id=703))
            await app.settle()
            assert sum(markers.is_summary(c.body) for c in app.fake.issue_comments(REPO, 7)) == 1
    asyncio.run(scenario())


def reply_id(comment: object) -> int:
    body = str(getattr(comment, "body", ""))
    return int(body.rsplit("ci-stability:reply=", 1)[1].split(" ", 1)[0])


def test_bad_default_branch_config_completes_the_check_saying_why(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            app.fake.add_file(REPO, CONFIG_PATH, "rules: &r\n  silenced-test: *r\n")
            head = await open_pr(app)
            (check,) = app.fake.check_runs(REPO, head)
            assert check.status == "completed"
            text = str(check.output)
            assert "recursive alias" in text and "Traceback" not in text
            assert app.store.counts()["dead"] == 0
    asyncio.run(scenario())
