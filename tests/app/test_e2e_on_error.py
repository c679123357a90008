"""A review that crashes marks the check `neutral` with the reason (fail open), or
`failure` when the repository's config says `on_error: failure` (fail closed)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.app.e2e_kit import REPO, live_app, pr_payload
from tests.github.kit import push, workflow

WF = ".github/workflows/ci.yml"


@pytest.mark.parametrize(("config", "conclusion"), [(None, "neutral"),
                                                     ("on_error: failure\n", "failure")])
def test_a_crashed_review_is_neutral_unless_the_repo_fails_closed(
    tmp_path: Path, config: str | None, conclusion: str
) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            if config is not None:
                app.fake.add_file(REPO, ".github/ci-stability.yml", config)
            head = push(app.fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
            # GitHub answers the file list (comparison, then list-files) with a 422 it never
            # should: the review cannot go on.
            app.fake.inject("GET", r"/pulls/7/files$|/compare/", 422, times=None)
            assert await app.deliver("pull_request", pr_payload("opened", 7, head)) == 202
            await app.settle()
            check = app.fake.check_runs(REPO, head)[-1]
            assert (check.status, check.conclusion) == ("completed", conclusion)
            assert "could not complete (GitHubError)" in check.output["summary"]
            assert "Traceback" not in str(check.output)
            assert app.fake.issue_comments(REPO, 7) == []
    asyncio.run(scenario())
