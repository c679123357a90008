"""Review limits end to end: the App on the fake GitHub, over real HTTP, with the real
client stack. A PR over the caps still gets a completed check run naming what was left
out, the fetch itself stops at the caps (texts of left-out files are never asked for),
and a bad `limits:` in the config is reported on the check, never a crash."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.core.limits import ReviewLimits
from tests.app.e2e_kit import REPO, LiveApp, live_app, pr_payload
from tests.github.kit import push, workflow

CONFIG = ".github/ci-stability.yml"


def workflows(count: int) -> dict[str, tuple[str | None, str | None]]:
    return {f".github/workflows/w{i:03}.yml": (workflow(), workflow(silenced=True))
            for i in range(count)}


def sources(count: int) -> dict[str, tuple[str | None, str | None]]:
    return {f"src/mod{i:03}.py": (f"x = {i}\n", f"x = {i + 1}\n") for i in range(count)}


async def review_pr(app: LiveApp, files: dict[str, tuple[str | None, str | None]]
                    ) -> dict[str, str | None]:
    head = push(app.fake, 7, files, tag="h1")
    assert await app.deliver("pull_request", pr_payload("opened", 7, head)) == 202
    await app.settle()
    (check,) = app.fake.check_runs(REPO, head)
    assert check.status == "completed"
    assert "Traceback" not in str(check.output)
    return check.output


def texts_asked(app: LiveApp) -> str:
    """Everything the App asked GitHub for file texts (GraphQL queries, contents reads)."""
    graphql = [json.dumps(c.body) for c in app.fake.calls if c.path == "/graphql"]
    contents = [c.path for c in app.fake.calls if "/contents/" in c.path]
    return "\n".join(graphql + contents)


def test_the_fetch_stops_at_the_operator_cap_and_the_check_names_the_rest(
        tmp_path: Path) -> None:
    async def scenario() -> None:
        limits = ReviewLimits(max_files=10)
        async with live_app(tmp_path, review_limits=limits) as app:
            # 320 files: more than one comparison answers, so list-files is paged (4 pages).
            output = await review_pr(app, {**sources(300), **workflows(20)})
            shown = str(output)
            assert "Review capped at 10 files" in shown
            assert "310 file(s) not reviewed" in shown
            # In-scope files come first: the first ten workflows are reviewed, named
            # skipped are the other workflows and the sources they pushed out.
            assert "`.github/workflows/w010.yml`" in shown
            assert "`.github/workflows/w009.yml`" not in shown
            assert app.fake.count("pulls/list-files") == 4
            asked = texts_asked(app)
            assert ".github/workflows/w009.yml" in asked
            assert ".github/workflows/w010.yml" not in asked  # never fetched, not only cut
    asyncio.run(scenario())


def test_a_repository_may_lower_its_caps(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            app.fake.add_file(REPO, CONFIG, "limits:\n  max_files: 3\n")
            output = await review_pr(app, workflows(5))
            assert "Review capped at 3 files" in str(output)
            assert "`.github/workflows/w003.yml`, `.github/workflows/w004.yml`" in str(output)
            assert ".github/workflows/w002.yml" in texts_asked(app)
    asyncio.run(scenario())


def test_a_repository_cannot_raise_its_caps_past_the_operator_ceiling(
        tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path, review_limits=ReviewLimits(max_files=2)) as app:
            app.fake.add_file(REPO, CONFIG, "limits:\n  max_files: 3000\n")
            output = str(await review_pr(app, workflows(4)))
            assert "Review capped at 2 files" in output
            assert "max_files 3000 is above this installation's ceiling of 2" in output
            assert ".github/workflows/w002.yml" not in texts_asked(app)
    asyncio.run(scenario())


@pytest.mark.parametrize(("config", "problem"), [
    ("limits:\n  max_files: 0\n", "`limits.max_files`: expected an integer from 1"),
    ("limits:\n  max_bytes: lots\n", "`limits.max_bytes`: expected an integer from 1024"),
    ("limits:\n  max_files: true\n", "`limits.max_files`: expected an integer"),
    ("limits:\n  files: 10\n", "`limits.files`: unknown key"),
    ("limits: 10\n", "`limits`: expected a mapping"),
])
def test_a_bad_limits_key_is_reported_on_a_completed_check(
        tmp_path: Path, config: str, problem: str) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            app.fake.add_file(REPO, CONFIG, config)
            output = str(await review_pr(app, workflows(1)))
            assert "ignored, the defaults apply" in output and problem in output
            assert "Review capped" not in output
    asyncio.run(scenario())
