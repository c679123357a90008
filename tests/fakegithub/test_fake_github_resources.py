"""Comments, reactions, permissions, contents and search, seen through gidgethub."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import aiohttp
import pytest
from gidgethub import BadRequest

from .testkit import REPO, client, expect_status, run, seeded_fake


def test_comments_reactions_and_permissions() -> None:
    fake = seeded_fake()
    fake.set_permission(REPO, "alice", "maintain")

    async def scenario() -> None:
        async with client(fake) as gh, aiohttp.ClientSession() as raw:
            made = await gh.post(f"/repos/{REPO}/issues/7/comments", data={"body": "summary"})
            assert made["user"]["login"] == "ci-stability-bot[bot]"
            assert made["performed_via_github_app"]["slug"] == "ci-stability-bot"
            headers = {"Authorization": f"token {fake.issue_installation_token(11)}"}
            statuses = []
            for _ in range(2):
                async with raw.post(made["url"] + "/reactions", json={"content": "eyes"},
                                    headers=headers) as answer:
                    statuses.append(answer.status)
            assert statuses == [201, 200]
            level = await gh.getitem(f"/repos/{REPO}/collaborators/alice/permission")
            assert (level["permission"], level["role_name"]) == ("write", "maintain")

    run(scenario)
    assert fake.violations == [] and fake.response_problems == []


def test_contents_raw_json_and_large_files() -> None:
    fake = seeded_fake()
    fake.add_file(REPO, ".github/ci-stability.yml", "fail_on: error\n")
    fake.add_file(REPO, "big.bin", b"x" * (1024 * 1024 + 1))

    async def scenario() -> None:
        async with client(fake) as gh:
            path = f"/repos/{REPO}/contents/.github/ci-stability.yml"
            raw = await gh.getitem(path, accept="application/vnd.github.raw")
            assert raw == "fail_on: error\n"
            as_json = await gh.getitem(path + "{?ref}", {"ref": "main"})
            assert as_json["encoding"] == "base64" and as_json["type"] == "file"
            with pytest.raises(BadRequest) as too_large:
                await gh.getitem(f"/repos/{REPO}/contents/big.bin")
            assert too_large.value.status_code == 403
            obj = await gh.getitem(f"/repos/{REPO}/contents/big.bin",
                                   accept="application/vnd.github.object")
            assert (obj["content"], obj["encoding"]) == ("", "none")

    run(scenario)
    assert fake.violations == []


def test_search_issues_qualifiers() -> None:
    fake = seeded_fake()
    fake.add_pull(REPO, 8, title="Fix flaky cpu test", body="b", state="closed",
                  merged_at=datetime(2024, 3, 1, tzinfo=UTC))
    fake.add_pull(REPO, 9, title="Fix flaky gpu test", body="b", state="closed")

    async def scenario() -> None:
        async with client(fake) as gh:
            q = f"repo:{REPO} is:pr is:merged merged:>=2024-02-01 flaky"
            found = await gh.getitem("/search/issues{?q}", {"q": q})
            assert [i["number"] for i in found["items"]] == [8]
            await expect_status(422, gh.getitem("/search/issues{?q}", {"q": f"repo:{REPO} flaky"}))

    run(scenario)
    assert fake.calls_to("search/issues-and-pull-requests")[0].status == 200
    assert fake.budgets["search"].remaining == 28


def test_put_contents_needs_the_current_blob_sha_and_diff_media_type() -> None:
    fake = seeded_fake()
    fake.state.installations[11].permissions["contents"] = "write"
    fake.add_file(REPO, "notes.md", "v1\n")

    async def scenario() -> None:
        async with client(fake) as gh:
            url = f"/repos/{REPO}/contents/notes.md"
            current = await gh.getitem(url)
            body = {"message": "update", "content": base64.b64encode(b"v2\n").decode()}
            await expect_status(422, gh.put(url, data=body))  # no sha
            await expect_status(409, gh.put(url, data=body | {"sha": "0" * 40}))
            updated = await gh.put(url, data=body | {"sha": current["sha"]})
            assert updated["content"]["sha"] != current["sha"]
            diff = await gh.getitem(f"/repos/{REPO}/pulls/7",
                                    accept="application/vnd.github.diff")
            assert diff.startswith("diff --git a/.github/workflows/cpu.yml")

    run(scenario)
    assert fake.state.repos[REPO].files["main"]["notes.md"] == b"v2\n"
    assert [v.kind for v in fake.violations] == ["semantic"]


def test_review_comments_carry_reaction_counts_and_list_their_reactions() -> None:
    fake = seeded_fake()

    async def scenario() -> None:
        async with client(fake) as gh:
            await gh.post(f"/repos/{REPO}/pulls/7/reviews", data={
                "event": "COMMENT", "body": "b", "comments": [
                    {"path": ".github/workflows/cpu.yml", "line": 11, "body": "x"}]})
            (placed,) = [c for r in fake.reviews(REPO, 7) for c in r.comments]
            fake.react_to_review_comment(placed.id, "alice", "-1")
            fake.react_to_review_comment(placed.id, "bob", "-1")
            fake.react_to_review_comment(placed.id, "carol", "heart")
            (listed,) = [c async for c in gh.getiter(f"/repos/{REPO}/pulls/7/comments")]
            assert listed["id"] == placed.id and listed["user"]["login"].endswith("[bot]")
            assert (listed["reactions"]["-1"], listed["reactions"]["total_count"]) == (2, 3)
            url = f"/repos/{REPO}/pulls/comments/{placed.id}/reactions{{?content}}"
            down = [r async for r in gh.getiter(url, {"content": "-1"})]
            assert sorted(r["user"]["login"] for r in down) == ["alice", "bob"]
            await expect_status(404, gh.getitem(f"/repos/{REPO}/pulls/comments/1/reactions"))

    run(scenario)
    assert fake.violations == [] and fake.response_problems == []
