"""Few calls per review: compare + one GraphQL query, REST where GraphQL falls short,
the config deferred to that query, and the App's budgeted repository view."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from bot.core.findings import Finding, Severity
from bot.core.surfaces import classify, surface_table
from bot.github.api_view import MAX_VIEW_CALLS
from bot.github.compare import usable
from bot.github.drive_sync import SyncDriver
from bot.github.graphql import fetch_objects
from bot.github.pull import fetch_snapshot
from bot.github.review import ReviewRequest, review_pull_request
from rules.base import Rule, RuleContext
from tests.fakegithub import running_fake_github
from tests.fakegithub.graphql_api import TEXT_LIMIT

from .kit import (
    APP_ID,
    BOT,
    INSTALLATION,
    NAME,
    OWNER,
    REPO,
    TEST_RULES,
    app_keys,
    app_side,
    new_fake,
    push,
    run,
    workflow,
)

TABLE = surface_table()
TIMEOUT = {"errors": [{"message": "Something went wrong while executing your query. This "
                                  "may be the result of a timeout, or it could be a GitHub "
                                  "bug. Please include `ABCD:1234` when reporting this issue."}]}
PATH = ".github/workflows/ci.yml"


def in_scope(path: str) -> bool:
    return classify(path, TABLE) is not None


class SiblingProbe(Rule):
    """Test-only rule: reports how many same-suffix siblings at the base set `probe: on`,
    asking the repository view as the real convention rules do."""

    id = "sibling-probe"
    severity = Severity.WARNING

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        view = ctx.snapshot.repo_view
        for changed in ctx.snapshot.files:
            folder = str(PurePosixPath(changed.path).parent)
            listed = view.list_dir(folder) if view else None
            texts = [view.read(p) for p in listed or () if p != changed.path] if view else []
            known = [t for t in texts if t is not None]
            same = sum("probe: on" in t for t in known)
            yield self.finding(f"{same} of {len(known)} siblings", file=changed)


class Greedy(Rule):
    """Test-only rule: asks for a new file every time it runs (a crawl, if allowed)."""

    id = "greedy"
    severity = Severity.WARNING
    runs = 0

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        Greedy.runs += 1
        view = ctx.snapshot.repo_view
        assert view is not None
        assert view.read(f"docs/page_{Greedy.runs}.md") is None
        return ()


def test_graphql_errors_and_truncated_blobs_fall_back_to_contents() -> None:
    fake = new_fake()
    big = "a: 1\n" + "#" * TEXT_LIMIT + "\n"
    head = push(fake, 7, {PATH: (workflow(), workflow(silenced=True)),
                          ".github/workflows/big.yml": (big, big + "b: 2\n")}, tag="h1")
    # GitHub timing out, again and again: HTTP 200, errors and no data.
    fault = fake.inject("POST", r"^/graphql$", 200, body=TIMEOUT, times=None)

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            first = await app.run(fetch_snapshot(OWNER, NAME, 7, wants_contents=in_scope))
            # Three objects, halved twice before giving up: 1 + 2 + 2 queries.
            assert fake.count("graphql") == 5
            fake.faults.remove(fault)
            second = await app.run(fetch_snapshot(OWNER, NAME, 7, wants_contents=in_scope))
            for snapshot in (first, second):
                by_path = {f.path: f for f in snapshot.files}
                assert by_path[PATH].head_text == workflow(silenced=True)
                assert by_path[PATH].base_text == workflow()
                assert by_path[".github/workflows/big.yml"].head_text == big + "b: 2\n"
                assert snapshot.notices == ()

    run(scenario())
    contents = [(c.path.rsplit("/", 1)[-1], c.query["ref"])
                for c in fake.calls_to("repos/get-content")]
    # First snapshot: GraphQL failed, both files over REST; second: only the one whose
    # text GitHub cut at 512,000 bytes.
    assert contents == [("ci.yml", head), ("big.yml", head), ("big.yml", head)]
    assert fake.count("graphql") == 6 and fake.violations == []


def test_a_batch_that_times_out_once_is_halved_not_read_file_by_file() -> None:
    fake = new_fake()
    files = {f".github/workflows/w{i}.yml": (workflow(), workflow(silenced=True))
             for i in range(6)}
    push(fake, 7, files, tag="h1")
    fake.inject("POST", r"^/graphql$", 200, body=TIMEOUT, times=1)

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            snapshot = await app.run(fetch_snapshot(OWNER, NAME, 7, wants_contents=in_scope))
            assert all(f.head_text == workflow(silenced=True) for f in snapshot.files)

    run(scenario())
    sizes = [len(c.body["variables"]) - 2 for c in fake.calls_to("graphql")]
    assert sizes == [7, 3, 4]  # 6 texts + 1 directory, then the two halves
    assert fake.count("repos/get-content") == 0 and fake.violations == []


def test_first_review_reads_config_with_texts_and_redelivery_costs_two_calls() -> None:
    fake = new_fake()
    # The config adds a surface: its file's text is fetched once the config is known.
    fake.add_file(REPO, ".github/ci-stability.yml",
                  "surfaces:\n  workflow: ['ci/**.yml']\n")
    push(fake, 7, {PATH: (workflow(), workflow(silenced=True)),
                   "ci/extra.yml": (workflow(), workflow(silenced=True))}, tag="h1")
    request = ReviewRequest(OWNER, NAME, 7, bot_login=BOT, rules=TEST_RULES)

    async def scenario() -> None:
        async with fake, app_side(fake, cache={}) as app:
            first = await app.run(review_pull_request(request, None))
            assert first.report is not None
            assert {f.path for f in first.report.findings} == {PATH, "ci/extra.yml"}
            start = len(fake.calls)
            again = await app.run(review_pull_request(request, first.state))
            assert again.skipped and again.skip_reason == "unchanged"
            redelivery = fake.calls[start:]
            assert [c.operation_id for c in redelivery] == ["pulls/get", "repos/get-content"]

    run(scenario())
    assert fake.count("repos/get-content") == 1  # only the redelivery's config read
    assert fake.count("graphql") == 2  # texts + config, then the config's extra surface
    assert fake.violations == []


def test_repo_view_is_filled_in_one_query_and_capped() -> None:
    fake = new_fake()
    head = push(fake, 7, {PATH: (workflow(), workflow(silenced=True))}, tag="h1")
    base = fake.state.pulls[(REPO, 7)].base_sha
    for i, probe in enumerate(("on", "on", "off")):
        fake.add_file(REPO, f".github/workflows/s{i}.yml", f"probe: {probe}\n", ref=base)
    probe = ReviewRequest(OWNER, NAME, 7, bot_login=BOT, rules=(SiblingProbe(),),
                          config_text="", publish=False)
    greedy = ReviewRequest(OWNER, NAME, 7, bot_login=BOT, rules=(Greedy(),),
                           config_text="", publish=False)

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            outcome = await app.run(review_pull_request(probe, None))
            assert outcome.report is not None
            assert [f.message for f in outcome.report.findings] == ["2 of 3 siblings"]
            before = fake.count("graphql")
            Greedy.runs = 0
            await app.run(review_pull_request(greedy, None))
            assert fake.count("graphql") - before == 1 + MAX_VIEW_CALLS
            assert Greedy.runs == 1 + MAX_VIEW_CALLS

    run(scenario())
    # Texts + directory listing in one query, the siblings' texts in one more.
    assert fake.count("graphql") == 2 + 1 + MAX_VIEW_CALLS
    assert head and fake.violations == []


def test_compare_stands_in_for_list_files_only_when_it_is_all_there() -> None:
    entry = {"filename": "a.yml", "patch": "@@ -1 +1 @@\n-a\n+b", "changes": 2}
    assert usable([entry], 1) and usable([entry], None)
    assert not usable([entry], 2)  # the PR says more files changed
    assert usable([entry] * 300, 300) and not usable([entry] * 300, None)  # cut at 300?
    assert not usable([entry] * 301, 301)
    assert not usable([{**entry, "patch": None}], 1)  # list-files may have the patch
    assert usable([{"filename": "b.bin", "changes": 0}], 1)  # nothing to show anyway


def test_a_draft_reads_the_config_first_and_is_skipped_without_more_calls() -> None:
    fake = new_fake()
    fake.add_file(REPO, ".github/ci-stability.yml", "review_drafts: false\n")
    push(fake, 7, {PATH: (workflow(), workflow(silenced=True))}, tag="h1")
    fake.state.pulls[(REPO, 7)].draft = True
    request = ReviewRequest(OWNER, NAME, 7, bot_login=BOT, rules=TEST_RULES,
                            skip_drafts=True)

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            outcome = await app.run(review_pull_request(request, None))
            assert outcome.skipped and outcome.skip_reason == "draft"

    run(scenario())
    assert [c.operation_id for c in fake.calls[1:]] == ["pulls/get", "repos/get-content"]


def test_the_cli_driver_posts_graphql_queries() -> None:
    with running_fake_github() as gh:
        gh.register_app(APP_ID, app_keys()[1])
        gh.add_installation(INSTALLATION, [REPO])
        gh.add_file(REPO, "a.txt", "hello\n")
        driver = SyncDriver(gh.issue_installation_token(INSTALLATION), base_url=gh.url,
                            seconds_between_requests=0, seconds_between_writes=0)
        found = driver.run(fetch_objects(OWNER, NAME, ["main:a.txt", "main:b.txt"]))
        assert found["main:a.txt"].text == "hello\n" and found["main:b.txt"].kind == "missing"
        assert driver.counter.reads == 1 and driver.counter.writes == 0
        assert gh.violations == []
