"""The fake driven by the App's real client stack (gidgethub on aiohttp): auth, paging,
request validation and the write paths the bot uses."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp
import jwt
import pytest
from gidgethub import BadRequest, apps
from gidgethub.aiohttp import GitHubAPI

from . import PullFile, generate_rsa_keypair
from .testkit import APP_ID, PATCH, REPO, app_keys, client, expect_status, run, seeded_fake


def test_installation_token_from_a_real_jwt_then_used() -> None:
    fake = seeded_fake()

    async def scenario() -> None:
        async with fake, aiohttp.ClientSession() as session:
            anonymous = GitHubAPI(session, "tests", base_url=fake.url)
            issued = await apps.get_installation_access_token(
                anonymous, installation_id="11", app_id=str(APP_ID), private_key=app_keys()[0]
            )
            assert issued["token"].startswith("ghs_")
            assert issued["repository_selection"] == "selected"
            bot = GitHubAPI(session, "tests", oauth_token=issued["token"], base_url=fake.url)
            pull = await bot.getitem(f"/repos/{REPO}/pulls/7")
            assert pull["head"]["repo"]["full_name"] == REPO

    run(scenario)
    assert fake.violations == []
    assert fake.response_problems == []


def app_jwt(claims: dict[str, Any], private_pem: str) -> str:
    # PyJWS, not jwt.encode: PyJWT refuses an integer `iss`, which GitHub accepts.
    return jwt.PyJWS().encode(json.dumps(claims).encode(), private_pem, algorithm="RS256")


@pytest.mark.parametrize(
    ("case", "expected"),
    [("int-iss", 201), ("wrong-key", 401), ("expired", 401), ("too-long", 401),
     ("wrong-app", 401)],
)
def test_app_jwt_checks(case: str, expected: int) -> None:
    fake = seeded_fake()
    now = int(time.time())
    key = generate_rsa_keypair()[0] if case == "wrong-key" else app_keys()[0]
    claims: dict[str, Any] = {"iat": now - 60, "exp": now + 540, "iss": str(APP_ID)}
    overrides: dict[str, dict[str, Any]] = {
        "int-iss": {"iss": APP_ID},
        "expired": {"iat": now - 900, "exp": now - 300},
        "too-long": {"iat": now, "exp": now + 3600},
        "wrong-app": {"iss": "1"},
    }
    claims |= overrides.get(case, {})

    async def scenario() -> None:
        async with fake, aiohttp.ClientSession() as session:
            headers = {"Authorization": f"Bearer {app_jwt(claims, key)}",
                       "Accept": "application/vnd.github+json"}
            url = f"{fake.url}/app/installations/11/access_tokens"
            async with session.post(url, headers=headers) as answer:
                assert answer.status == expected
                body = await answer.json()
                assert ("token" in body) == (expected == 201)

    run(scenario)
    assert fake.violations == []


def test_expired_token_and_foreign_repo() -> None:
    fake = seeded_fake()
    fake.add_repo("someone/else")

    async def scenario() -> None:
        async with client(fake) as gh:
            with pytest.raises(BadRequest) as hidden:
                await gh.getitem("/repos/someone/else/pulls")
            assert hidden.value.status_code == 404
            fake.advance(3601)
            with pytest.raises(BadRequest) as expired:
                await gh.getitem(f"/repos/{REPO}/pulls")
            assert expired.value.status_code == 401

    run(scenario)


def test_pagination_follows_link_headers() -> None:
    fake = seeded_fake()
    fake.state.pulls[(REPO, 7)].files += [PullFile(f"tests/cpu/test_{i}.py", PATCH)
                                          for i in range(70)]

    async def scenario() -> None:
        async with client(fake) as gh:
            names = [f["filename"] async for f in gh.getiter(f"/repos/{REPO}/pulls/7/files")]
            assert len(names) == 72 and len(set(names)) == 72

    run(scenario)
    calls = fake.calls_to("pulls/list-files")
    assert [c.query.get("page") for c in calls] == [None, "2", "3"]
    # Like github.com, later pages are addressed by repository id.
    assert calls[1].raw_path.startswith("/repositories/")
    assert calls[1].path == f"/repos/{REPO}/pulls/7/files"
    assert fake.violations == []


def test_request_validation_catches_client_bugs() -> None:
    fake = seeded_fake()
    head = fake.state.pulls[(REPO, 7)].head_sha
    note = {"path": "a.py", "start_line": 1, "end_line": 1, "annotation_level": "warning",
            "message": "m"}

    async def scenario() -> None:
        async with client(fake) as gh:
            await expect_status(422, gh.post(f"/repos/{REPO}/check-runs", data={
                "name": "CI stability review", "head_sha": head,
                "output": {"title": "t", "summary": "s", "annotations": [note] * 51}}))
            await expect_status(
                422, gh.getitem(f"/repos/{REPO}/pulls/7/files?per_page=100&sort=name"))
            await expect_status(
                422, gh.post(f"/repos/{REPO}/issues/7/comments", data={"body": 5}))
            await expect_status(422, gh.post(f"/repos/{REPO}/check-runs", data={
                "name": "x", "head_sha": head, "status": "completed"}))
            with pytest.raises(BadRequest) as missing:
                await gh.getitem(f"/repos/{REPO}/commits/{head}/status")
            assert missing.value.status_code == 404

    run(scenario)
    assert [v.kind for v in fake.violations] == [
        "body-schema", "query-param", "body-schema", "body-schema", "unknown-route"]
    assert "Only 50 items are allowed; 51 were supplied." in fake.violations[0].message
    assert fake.writes() and all(c.status >= 400 for c in fake.writes())


def test_check_run_annotations_accumulate_across_patches() -> None:
    fake = seeded_fake()
    head = fake.state.pulls[(REPO, 7)].head_sha
    notes = [{"path": ".github/workflows/cpu.yml", "start_line": i, "end_line": i,
              "annotation_level": "warning", "message": f"m{i}"} for i in range(1, 81)]

    async def scenario() -> None:
        async with client(fake) as gh:
            created = await gh.post(f"/repos/{REPO}/check-runs", data={
                "name": "CI stability review", "head_sha": head, "status": "in_progress",
                "output": {"title": "t", "summary": "s", "annotations": notes[:50]}})
            assert created["pull_requests"][0]["number"] == 7
            done = await gh.patch(created["url"], data={
                "conclusion": "neutral",
                "output": {"title": "t", "summary": "s2", "annotations": notes[50:]}})
            assert done["status"] == "completed" and done["output"]["annotations_count"] == 80

    run(scenario)
    (check,) = fake.check_runs(REPO, head)
    assert check.output["summary"] == "s2" and len(check.annotations) == 80
    assert fake.violations == [] and fake.response_problems == []


def test_review_comments_must_target_diff_lines() -> None:
    fake = seeded_fake()

    async def scenario() -> None:
        async with client(fake) as gh:
            url = f"/repos/{REPO}/pulls/7/reviews"
            ok = await gh.post(url, data={"event": "COMMENT", "body": "b", "comments": [
                {"path": ".github/workflows/cpu.yml", "line": 11, "side": "RIGHT", "body": "x"},
                {"path": ".github/workflows/cpu.yml", "line": 11, "side": "LEFT", "body": "y"}]})
            assert ok["state"] == "COMMENTED"
            outside = {"path": ".github/workflows/cpu.yml", "line": 40, "body": "outside"}
            await expect_status(422, gh.post(url, data={
                "event": "COMMENT", "body": "b", "comments": [outside]}))
            # GitHub omitted this file's patch, so nothing in it can be commented on.
            no_hunk = {"path": "docs/huge.md", "line": 1, "body": "no hunk"}
            await expect_status(422, gh.post(url, data={
                "event": "COMMENT", "body": "b", "comments": [no_hunk]}))

    run(scenario)
    assert [v.kind for v in fake.violations] == ["semantic", "semantic"]
    (review,) = fake.reviews(REPO, 7)
    assert review.user == "ci-stability-bot[bot]" and len(review.comments) == 2


def test_job_log_redirect_is_followed() -> None:
    fake = seeded_fake()
    run_ = fake.add_workflow_run(REPO, head_sha="a" * 40, conclusion="failure")
    job = fake.add_job(run_.id, name="cpu-tests", log="E   torch.OutOfMemoryError: CUDA\n")

    async def scenario() -> None:
        async with client(fake) as gh:
            jobs = await gh.getitem(f"/repos/{REPO}/actions/runs/{run_.id}/jobs")
            assert jobs["jobs"][0]["name"] == "cpu-tests"
            text = await gh.getitem(f"/repos/{REPO}/actions/jobs/{job.id}/logs")
            assert "OutOfMemoryError" in text

    run(scenario)
    assert [c.status for c in fake.calls[-2:]] == [302, 200]
    assert fake.violations == []


def test_check_runs_for_a_ref_list_newest_first_latest_per_name_unless_all() -> None:
    fake = seeded_fake()
    pr = fake.state.pulls[(REPO, 7)]

    async def scenario() -> None:
        async with client(fake) as gh:
            ids = []
            for name, ext in (("CI stability review", "a"), ("CI stability review", "b"),
                              ("other", "")):
                made = await gh.post(f"/repos/{REPO}/check-runs", data={
                    "name": name, "head_sha": pr.head_sha, "external_id": ext,
                    "status": "in_progress"})
                ids.append(made["id"])
            base = f"/repos/{REPO}/commits/{pr.head_sha}/check-runs"
            latest = await gh.getitem(base)
            assert [r["id"] for r in latest["check_runs"]] == [ids[2], ids[1]]
            every = await gh.getitem(f"{base}?check_name=CI+stability+review&filter=all")
            assert every["total_count"] == 2
            assert [(r["id"], r["external_id"]) for r in every["check_runs"]] == [
                (ids[1], "b"), (ids[0], "a")]
            by_branch = await gh.getitem(f"/repos/{REPO}/commits/{pr.head_ref}/check-runs")
            assert by_branch["total_count"] == 2
            await expect_status(422, gh.getitem(f"/repos/{REPO}/commits/{'0' * 40}/check-runs"))

    run(scenario)
    assert [v.kind for v in fake.violations] == ["semantic"]  # the unknown commit only


def test_a_stall_after_the_write_lets_it_land_before_the_answer() -> None:
    fake = seeded_fake()
    pr = fake.state.pulls[(REPO, 7)]
    stall = fake.inject_delay("POST", r"/check-runs$", seconds=2, after=True, skip=1)
    body = {"name": "n", "head_sha": pr.head_sha, "status": "in_progress"}

    async def scenario() -> None:
        async with client(fake) as gh:
            await gh.post(f"/repos/{REPO}/check-runs", data=body)  # let through
            late = asyncio.create_task(gh.post(f"/repos/{REPO}/check-runs", data=body))
            while stall.hits == 0:
                await asyncio.sleep(0.01)
            assert len(fake.check_runs(REPO)) == 2 and not late.done()  # landed, unanswered
            await late

    run(scenario)
    assert stall.times == 0 and len(fake.check_runs(REPO)) == 2
