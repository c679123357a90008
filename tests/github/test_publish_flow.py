"""Publishing with the App's driver: check run, review, summary comment, idempotency."""

from __future__ import annotations

from typing import Any

from bot.github.publish import fail_check
from bot.github.review import ReviewOutcome, ReviewRequest, review_pull_request
from bot.render.checkrun import CHECK_NAME
from bot.render.markers import SUMMARY as SUMMARY_MARKER
from tests.fakegithub import FakeGitHub

from .kit import (
    BOT,
    NAME,
    OWNER,
    REPO,
    TEST_RULES,
    AppSide,
    app_side,
    bot_writes,
    new_fake,
    push,
    run,
    sole,
    workflow,
)

PATH = ".github/workflows/ci.yml"


def request(number: int = 7, **options: Any) -> ReviewRequest:
    return ReviewRequest(OWNER, NAME, number, bot_login=BOT, rules=TEST_RULES, **options)


async def review(app: AppSide, state: dict[str, Any] | None, number: int = 7,
                 **options: Any) -> ReviewOutcome:
    return await app.run(review_pull_request(request(number, **options), state))


def summary_comments(fake: FakeGitHub, number: int = 7) -> list[Any]:
    return [c for c in fake.issue_comments(REPO, number) if SUMMARY_MARKER in c.body]


def test_first_push_fix_push_and_redelivery() -> None:
    fake = new_fake()
    first = push(fake, 7, {PATH: (workflow(legacy=True), workflow(legacy=True, silenced=True))},
                 tag="h1")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            # First push: a check run, one review with the inline finding, one summary.
            outcome = await review(app, None)
            assert outcome.report is not None
            rules = sorted(f.rule for f in outcome.report.findings)
            assert rules == ["test-legacy", "test-silenced-job"]
            check = sole(fake.check_runs(REPO, first))
            assert (check.name, check.status, check.conclusion) == (
                CHECK_NAME, "completed", "failure")
            assert [a["title"] for a in check.annotations] == ["test-legacy",
                                                              "test-silenced-job"]
            assert check.actions[0]["identifier"] == "rerun"
            review1 = sole(fake.reviews(REPO, 7))
            assert review1.state == "COMMENTED" and review1.commit_id == first
            comment = sole(review1.comments)
            assert (comment.path, comment.line, comment.side, comment.position) == (
                PATH, 8, "RIGHT", None)
            assert "```suggestion\n    continue-on-error: false\n```" in comment.body
            summary = sole(summary_comments(fake))
            assert summary.user == BOT and "test-legacy" in summary.body
            state = outcome.state

            # The same head again (a redelivered webhook): no writes, at most 3 calls.
            before_writes, before_calls = len(fake.writes()), len(fake.calls)
            again = await review(app, state)
            assert again.skipped and again.state == state
            assert len(fake.writes()) == before_writes
            assert len(fake.calls) - before_calls <= 3

            # "Re-run review" on the unchanged head: into the same check run (set
            # back to in_progress, then completed), its annotations not sent again.
            writes = len(fake.writes())
            rerun = await review(app, again.state, force=True)
            assert bot_writes(fake)[writes:] == ["checks/update", "checks/update"]
            (check,) = fake.check_runs(REPO, first)
            assert check.conclusion == "failure" and len(check.annotations) == 2
            again = rerun

            # A push that fixes the silenced job: resolved in the edited summary,
            # nothing posted twice.
            second = push(fake, 7, {PATH: (workflow(legacy=True),
                                           workflow(legacy=True, extra="# more\n"))}, tag="h2")
            fixed = await review(app, again.state)
            assert fixed.report is not None
            assert [f.rule for f in fixed.report.findings] == ["test-legacy"]
            assert len(fake.reviews(REPO, 7)) == 1  # nothing new to comment inline
            summary = sole(summary_comments(fake))
            assert "Resolved since the previous push" in summary.body
            assert "test-silenced-job" in summary.body.split("Resolved since")[1]
            assert sole(fake.check_runs(REPO, second)).conclusion == "neutral"

    run(scenario())
    assert fake.violations == [] and fake.response_problems == []


def test_clean_pr_gets_only_a_green_check_and_a_resolved_summary_later() -> None:
    fake = new_fake()
    head = push(fake, 7, {PATH: (workflow(), workflow(extra="# tidy\n"))}, tag="h1")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            clean = await review(app, None)
            assert sole(fake.check_runs(REPO, head)).conclusion == "success"
            assert fake.issue_comments(REPO, 7) == [] and fake.reviews(REPO, 7) == []
            assert bot_writes(fake) == ["checks/create", "checks/update"]

            push(fake, 7, {PATH: (workflow(), workflow(silenced=True))}, tag="h2")
            dirty = await review(app, clean.state)
            summary = sole(summary_comments(fake))
            push(fake, 7, {PATH: (workflow(), workflow(extra="# tidy\n"))}, tag="h3")
            fixed = await review(app, dirty.state)
            edited = sole(summary_comments(fake))
            assert edited.id == summary.id and "All findings resolved" in edited.body
            assert "no findings" in edited.body
            # Still clean on the next push: the all-clear summary is left alone.
            push(fake, 7, {PATH: (workflow(), workflow(extra="# tidy2\n"))}, tag="h4")
            writes = len(fake.writes())
            await review(app, fixed.state)
            assert bot_writes(fake)[writes:] == ["checks/create", "checks/update"]

    run(scenario())
    assert fake.violations == []


def test_out_of_scope_pr_gets_a_skipped_check_and_no_comment() -> None:
    fake = new_fake()
    head = push(fake, 7, {"docs/index.md": ("a\n", "b\n")}, tag="h1")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            await review(app, None)

    run(scenario())
    check = sole(fake.check_runs(REPO, head))
    assert check.conclusion == "skipped"
    assert check.output["title"] == "No CI-stability surfaces changed"
    assert fake.issue_comments(REPO, 7) == []
    # The config alone, read in the (otherwise empty) GraphQL query for file texts.
    assert fake.count("repos/get-content") == 0 and fake.count("graphql") == 1
    assert fake.violations == []


def test_more_than_50_annotations_go_in_patches_of_50() -> None:
    fake = new_fake()
    steps = "".join(f"      - run: step-{i}\n" for i in range(120))
    head = push(fake, 7, {PATH: (workflow(), workflow(extra=steps))}, tag="h1")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            outcome = await review(app, None, max_comments=30)
            assert outcome.report is not None and len(outcome.report.findings) == 120

    run(scenario())
    check = sole(fake.check_runs(REPO, head))
    assert len(check.annotations) == 120
    sizes = [len((c.body.get("output") or {}).get("annotations", []))
             for c in fake.calls if c.operation_id in {"checks/create", "checks/update"}]
    assert sizes == [0, 50, 50, 20]  # in_progress, then completed + two appended batches
    assert len(sole(fake.reviews(REPO, 7)).comments) == 30  # capped; the rest in the summary
    assert "step-119" in sole(summary_comments(fake)).body
    assert fake.violations == []


def test_range_comment_with_suggestion_and_lost_state_is_recovered() -> None:
    fake = new_fake()
    pair = "      # pair\n      - run: pair\n"
    push(fake, 7, {PATH: (workflow(), workflow(silenced=True, extra=pair))}, tag="h1")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            await review(app, None)
            comments = {c.body.split("**")[1]: c for c in sole(fake.reviews(REPO, 7)).comments}
            ranged = comments["`test-steps`"]
            assert (ranged.start_line, ranged.line, ranged.start_side) == (11, 12, "RIGHT")
            assert "```suggestion\n      # paired\n      - run: paired\n```" in ranged.body
            # The database is lost: the next push recovers what was posted from GitHub.
            push(fake, 7, {PATH: (workflow(), workflow(silenced=True, extra=pair + "#\n"))},
                 tag="h2")
            writes = len(fake.writes())
            await review(app, None)
            assert bot_writes(fake)[writes:] == [
                "checks/create", "checks/update", "issues/update-comment"]

    run(scenario())
    assert len(fake.reviews(REPO, 7)) == 1 and len(summary_comments(fake)) == 1
    assert fake.violations == []


def test_a_crash_is_recorded_as_a_neutral_check_and_the_next_run_recovers() -> None:
    fake = new_fake()
    head = push(fake, 7, {PATH: (workflow(), workflow(silenced=True))}, tag="h1")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            crashed = await app.run(fail_check(OWNER, NAME, head, None))
            check = sole(fake.check_runs(REPO, head))
            # Fails open: a crash of the bot must not block merging behind a required check.
            assert check.conclusion == "neutral" and "Traceback" not in str(check.output)
            await review(app, crashed)
            # The retry shows a fresh run; GitHub displays the newest run of a name.
            latest = fake.check_runs(REPO, head)[-1]
            assert (latest.conclusion, latest.output["title"]) == ("failure", "1 error")
            # Without an early in_progress run, the failed one is completed in place.
            crashed = await app.run(fail_check(OWNER, NAME, head, None))
            count = len(fake.check_runs(REPO, head))
            await review(app, crashed, early_check=False)
            assert len(fake.check_runs(REPO, head)) == count
            assert fake.check_runs(REPO, head)[-1].output["title"] == "1 error"
            assert len(fake.reviews(REPO, 7)) == 1 and len(summary_comments(fake)) == 1

    run(scenario())
    assert fake.violations == []
