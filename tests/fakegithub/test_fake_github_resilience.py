"""Conditional requests, injected faults, rate limits and timeouts, seen through gidgethub."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from gidgethub import BadRequest, GitHubBroken
from gidgethub.aiohttp import GitHubAPI

from .testkit import REPO, client, run, seeded_fake


def test_etag_answers_304_without_spending_budget() -> None:
    fake = seeded_fake()
    cache: dict[str, Any] = {}

    async def scenario() -> None:
        async with client(fake, cache=cache) as gh:
            first = await gh.getitem(f"/repos/{REPO}/pulls/7")
            remaining = fake.budgets["core"].remaining
            again = await gh.getitem(f"/repos/{REPO}/pulls/7")
            assert again == first
            assert fake.budgets["core"].remaining == remaining

    run(scenario)
    assert [c.status for c in fake.calls_to("pulls/get")] == [200, 304]


def test_injected_faults_and_rate_limits() -> None:
    fake = seeded_fake()
    fake.inject("GET", r"/pulls/7$", 502)
    fake.inject_secondary_rate_limit("POST", r"/issues/7/comments$", retry_after=1)

    async def scenario() -> None:
        async with client(fake) as gh:
            with pytest.raises(GitHubBroken):
                await gh.getitem(f"/repos/{REPO}/pulls/7")
            assert (await gh.getitem(f"/repos/{REPO}/pulls/7"))["number"] == 7
            with pytest.raises(BadRequest) as limited:
                await gh.post(f"/repos/{REPO}/issues/7/comments", data={"body": "hi"})
            assert limited.value.status_code == 403
            assert limited.value.headers["retry-after"] == "1"
            assert "secondary rate limit" in str(limited.value)
            fake.set_rate_limit("core", remaining=1)
            await gh.getitem(f"/repos/{REPO}/pulls/7")
            with pytest.raises(BadRequest) as exhausted:
                await gh.getitem(f"/repos/{REPO}/pulls/7")
            assert exhausted.value.headers["x-ratelimit-remaining"] == "0"

    run(scenario)
    assert fake.issue_comments(REPO, 7) == []


def test_injected_delay_trips_client_timeout() -> None:
    fake = seeded_fake()
    fake.inject_delay("GET", r"/pulls/7$", 2.0)

    async def scenario() -> None:
        timeout = aiohttp.ClientTimeout(total=0.2)
        async with fake, aiohttp.ClientSession(timeout=timeout) as session:
            gh = GitHubAPI(session, "t", oauth_token=fake.issue_installation_token(11),
                           base_url=fake.url)
            with pytest.raises(asyncio.TimeoutError):
                await gh.getitem(f"/repos/{REPO}/pulls/7")

    # The 0.2 s client timeout fires long before the injected 2 s delay ends.
    run(scenario)
