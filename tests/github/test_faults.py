"""Faults, limits and redirects through the App's driver (gidgethub on aiohttp)."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from gidgethub.aiohttp import GitHubAPI

from bot.app.metrics import Metrics, metrics_hook
from bot.errors import PermanentError, RetryableError
from bot.github.auth import AppAuth
from bot.github.calls import ApiCall, repo_path
from bot.github.retry import RetryPolicy, decide
from bot.github.review import ReviewRequest, review_pull_request
from bot.render.markers import SUMMARY as SUMMARY_MARKER

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
    sole,
    workflow,
)

PATH = ".github/workflows/ci.yml"
REQUEST = ReviewRequest(OWNER, NAME, 7, bot_login=BOT, rules=TEST_RULES)


def test_502s_timeouts_and_a_secondary_limit_still_publish_once() -> None:
    fake = new_fake()
    head = push(fake, 7, {PATH: (workflow(), workflow(silenced=True))}, tag="h1")
    fake.inject("GET", r"/compare/", 502, times=2)
    fake.inject("POST", r"/pulls/7/reviews$", 502)
    fake.inject_delay("POST", r"^/graphql$", 5.0)  # the client gives up after 1 s
    fake.inject_secondary_rate_limit("POST", r"/issues/7/comments$", retry_after=7)

    async def scenario() -> None:
        async with fake, app_side(fake, timeout=1.0) as app:
            outcome = await app.run(review_pull_request(REQUEST, None))
            assert outcome.report is not None and len(outcome.report.findings) == 1
            assert 7.0 in app.sleeps.waits  # Retry-After honoured
            assert app.counter.retries == 5 and app.counter.by_status[0] == 1

    run(scenario())
    assert len(fake.check_runs(REPO, head)) == 1
    assert len(fake.reviews(REPO, 7)) == 1
    assert len([c for c in fake.issue_comments(REPO, 7) if SUMMARY_MARKER in c.body]) == 1
    assert fake.violations == []


def test_secondary_limit_without_retry_after_waits_at_least_a_minute() -> None:
    fake = new_fake()
    push(fake, 7, {PATH: (workflow(), workflow())}, tag="h1")
    fake.inject("GET", r"/pulls/7$", 403)  # GitHub's secondary-limit message, no Retry-After

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            result = await app.driver.call(
                ApiCall("GET", f"{repo_path(OWNER, NAME)}/pulls/7", operation="pulls/get"))
            assert result.status == 200
            assert app.sleeps.waits and app.sleeps.waits[0] >= 60

    run(scenario())


def test_exhausted_primary_limit_and_persistent_5xx_become_retryable_errors() -> None:
    fake = new_fake()
    push(fake, 7, {PATH: (workflow(), workflow())}, tag="h1")
    pull = ApiCall("GET", f"{repo_path(OWNER, NAME)}/pulls/7", operation="pulls/get")

    async def scenario() -> None:
        async with fake:
            async with app_side(fake) as app:
                fake.set_rate_limit("core", remaining=0, reset_in=1800)
                with pytest.raises(RetryableError) as limited:
                    await app.driver.call(pull)
                assert limited.value.retry_after is not None
                assert limited.value.retry_after > 1700
                fake.set_rate_limit("core", remaining=1, reset_in=1800)
                assert (await app.driver.call(pull)).status == 200  # spends the last one
                with pytest.raises(RetryableError):  # known to be exhausted: not even sent
                    await app.driver.call(pull)
            fake.set_rate_limit("core", remaining=5000, reset_in=3600)
            fake.inject("GET", r"/pulls/7$", 503, times=None)
            async with app_side(fake) as app:
                with pytest.raises(RetryableError) as broken:
                    await app.driver.call(pull)
                assert broken.value.retry_after is None and "503" in str(broken.value)

    run(scenario())
    assert fake.count("pulls/get") == 2 + 4


def test_404_is_a_status_and_job_logs_follow_the_redirect() -> None:
    fake = new_fake()
    push(fake, 7, {PATH: (workflow(), workflow())}, tag="h1")
    run_ = fake.add_workflow_run(REPO, head_sha="a" * 40)
    job = fake.add_job(run_.id, name="cpu-tests", log="E   torch.OutOfMemoryError: CUDA\n")
    seen: list[tuple[str, int, int | None]] = []

    async def scenario() -> None:
        on_call = lambda op, status, left: seen.append((op, status, left))  # noqa: E731
        async with fake, app_side(fake, on_call=on_call) as app:
            missing = await app.driver.call(ApiCall(
                "GET", f"{repo_path(OWNER, NAME)}/pulls/99", operation="pulls/get"))
            assert missing.status == 404 and missing.message == "Not Found"
            logs = await app.driver.call(ApiCall(
                "GET", f"{repo_path(OWNER, NAME)}/actions/jobs/{job.id}/logs",
                operation="actions/download-job-logs-for-workflow-run"))
            assert logs.status == 200 and b"OutOfMemoryError" in logs.data

    run(scenario())
    assert [(op, status) for op, status, _ in seen] == [
        ("pulls/get", 404), ("actions/download-job-logs-for-workflow-run", 200)]
    assert all(left is not None for _, _, left in seen[:1])
    metrics = Metrics()
    metrics_hook(metrics)("pulls/get", 404, 4999)
    exported = metrics.render().decode()
    assert 'operation="pulls/get",status="404"' in exported and "4999" in exported
    blob = sole(c for c in fake.calls if c.operation_id == "fake/job-log-blob")
    assert "authorization" not in blob.headers  # the token never follows a redirect
    assert fake.violations == []


def test_etag_cache_answers_unchanged_reads_for_free() -> None:
    fake = new_fake()
    push(fake, 7, {PATH: (workflow(), workflow())}, tag="h1")
    cache: dict[str, Any] = {}
    pull = ApiCall("GET", f"{repo_path(OWNER, NAME)}/pulls/7", operation="pulls/get")

    async def scenario() -> None:
        async with fake, app_side(fake, cache=cache) as app:
            first = await app.driver.call(pull)
            again = await app.driver.call(pull)
            assert again.from_cache and again.status == 200 and again.data == first.data

    run(scenario())
    assert [c.status for c in fake.calls_to("pulls/get")] == [200, 304]


def test_installation_tokens_are_cached_until_five_minutes_before_expiry() -> None:
    fake = new_fake()
    now = [0.0]

    async def scenario() -> None:
        async with fake, aiohttp.ClientSession() as session:
            gh = GitHubAPI(session, "tests", base_url=fake.url)
            auth = AppAuth(APP_ID, app_keys()[0], clock=lambda: now[0])
            now[0] = fake.now().timestamp()
            token = await auth.installation_token(gh, INSTALLATION)
            assert await auth.installation_token(gh, INSTALLATION) == token
            now[0] += 54 * 60
            assert await auth.installation_token(gh, INSTALLATION) == token
            now[0] += 2 * 60  # within 5 minutes of expiry
            assert await auth.installation_token(gh, INSTALLATION) != token
            assert token not in repr(auth) and "PRIVATE" not in repr(auth)
            with pytest.raises(PermanentError):
                await auth.installation_token(gh, 999)

    run(scenario())
    assert fake.count("apps/create-installation-access-token") == 3


def test_retry_decisions() -> None:
    policy = RetryPolicy(backoff_base=1, backoff_cap=8, secondary_wait=60)

    def wait(status: int | None, headers: dict[str, str] | None = None, body: Any = None,
             attempt: int = 1) -> float | None:
        decision = decide(policy, attempt, status, headers or {}, body, 1000.0, lambda: 0.5)
        return None if decision is None else decision.wait

    assert wait(502) == 0.75 and wait(502, attempt=3) == 3.0 and wait(502, attempt=9) == 6.0
    assert wait(None) == 0.75  # timeout
    assert wait(403, {"retry-after": "7"}) == 7
    assert wait(429, {"retry-after": "0"}) == 0
    assert wait(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1100"}) == 101
    assert wait(403, {}, {"message": "You have exceeded a secondary rate limit."}) == 60
    assert wait(429) == 60
    assert wait(403, {}, {"message": "Resource not accessible by integration"}) is None
    assert wait(404) is None and wait(422) is None and wait(200) is None


def test_an_unanswered_create_is_not_resent_in_place_and_the_retry_finds_it() -> None:
    """A POST that times out may have landed: the driver gives the delivery back (to be
    retried, with recovery by marker) instead of posting it again at once."""
    fake = new_fake()
    head = push(fake, 7, {PATH: (workflow(), workflow(silenced=True))}, tag="h1")
    fake.inject_delay("POST", r"/issues/7/comments$", 3.0, after=True)  # lands, answer late

    async def scenario() -> None:
        async with fake, app_side(fake, timeout=1.0) as app:
            with pytest.raises(RetryableError, match="no answer"):
                await app.run(review_pull_request(REQUEST, None))
            summaries = [c for c in fake.issue_comments(REPO, 7) if SUMMARY_MARKER in c.body]
            assert len(summaries) == 1  # it landed, once
            await app.run(review_pull_request(REQUEST, None))  # the delivery's retry

    run(scenario())
    assert len(fake.check_runs(REPO, head)) == 1
    assert len(fake.reviews(REPO, 7)) == 1
    assert len([c for c in fake.issue_comments(REPO, 7) if SUMMARY_MARKER in c.body]) == 1
