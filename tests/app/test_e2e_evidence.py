"""End to end through the App: a workflow_job webhook is indexed, and the review of a
CI-fix PR then shows that run, its root cause, the same failure on other jobs, and a
possibly duplicate open PR."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

from tests.app.e2e_kit import comment_payload, live_app, pr_payload
from tests.evidence.factories import (
    GLM_CONFIG,
    NOW,
    ci_log,
    failed_job_on_fake_github,
    nightly_oom_on_fake_github,
)
from tests.fakegithub import FakeGitHub, load_payload
from tests.github.kit import REPO, new_fake, push

BASE = "model_name: nvidia/GLM-5.2-NVFP4\nenv:\n  VLLM_USE_V2_MODEL_RUNNER: '1'\n"
HEAD = BASE + "  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n"


def test_indexed_failure_and_duplicate_show_in_review_and_runs_command(tmp_path: Path) -> None:
    fake = new_fake()
    head = push(fake, 7, {GLM_CONFIG: (BASE, HEAD)}, tag="h1",
                title="[CI] Stabilize GLM-5.2 PCP evaluation",
                body="Fixes the OOM in the PCP eval.")
    push(fake, 8, {GLM_CONFIG: (BASE, BASE + "  VLLM_LOGGING_LEVEL: DEBUG\n")}, tag="o1",
         title="[CI] Fix GLM-5.2 PCP OOM", body="Another attempt at the same failure.")
    job_event = nightly_oom_on_fake_github(fake, REPO)
    job_event["installation"] = {"id": 11, "node_id": "x"}

    async def scenario() -> None:
        async with live_app(tmp_path, fake) as app:
            app.handler.context.clock = NOW.timestamp
            assert await app.deliver("workflow_job", job_event) == 202
            await app.settle()
            assert await app.deliver("pull_request", pr_payload("opened", 7, head)) == 202
            await app.settle()
            summary = next(c for c in fake.issue_comments(REPO, 7)
                           if "ci-stability:summary" in c.body)
            assert "Prior failing runs" in summary.body
            assert "LM Eval PCP 4xB200" in summary.body and "cuda-oom" in summary.body
            assert "Possible duplicate work" in summary.body and "#8" in summary.body
            await app.deliver("issue_comment", comment_payload(7, "/stability runs", "dev"))
            await app.settle()
            assert any(c.body.startswith("### Prior failing runs") and
                       "LM Eval PCP 4xB200" in c.body for c in fake.issue_comments(REPO, 7))
            assert fake.violations == []

    asyncio.run(scenario())


def _same_oom_on_another_job(fake: FakeGitHub) -> dict[str, Any]:
    """A `workflow_job` delivery: the same B200 OOM (the vendored excerpt alone, which
    names no config) failing a distributed-tests job of a PR branch."""
    payload = failed_job_on_fake_github(
        fake, REPO, job_name="Distributed Tests (4xB200)",
        log=ci_log("vllm-issue-51071-cuda-oom-b200-pcp.log").decode(), workflow="CI",
        path=".github/workflows/ci.yml", event="pull_request", branch="feature",
        head_sha="d" * 40, hours_ago=5)
    payload["installation"] = {"id": 11, "node_id": "x"}
    return payload


def test_the_same_failure_on_other_jobs_shows_collapsed_and_a_clean_pr_gets_nothing(
        tmp_path: Path) -> None:
    fake = new_fake()
    head = push(fake, 7, {GLM_CONFIG: (BASE, HEAD)}, tag="h1", title="Tune GLM-5.2 PCP eval")
    clean = push(fake, 9, {"docs/README.md": ("a\n", "b\n")}, tag="c1", title="Docs")
    nightly = nightly_oom_on_fake_github(fake, REPO)
    nightly["installation"] = {"id": 11, "node_id": "x"}
    other = _same_oom_on_another_job(fake)
    link = other["workflow_job"]["html_url"]

    async def scenario() -> None:
        async with live_app(tmp_path, fake) as app:
            app.handler.context.clock = NOW.timestamp
            for event in (nightly, other):
                assert await app.deliver("workflow_job", event) == 202
            await app.settle()
            for number, sha in ((7, head), (9, clean)):
                assert await app.deliver("pull_request", pr_payload("opened", number, sha)) == 202
            await app.settle()
            assert fake.violations == []

    asyncio.run(scenario())
    (summary,) = [c for c in fake.issue_comments(REPO, 7) if "ci-stability:summary" in c.body]
    table, similar = summary.body.split("<details><summary>Similar failures elsewhere (1)", 1)
    assert "LM Eval PCP 4xB200" in table and "Distributed Tests" not in table
    assert f"[Distributed Tests (4xB200) · Actions CI run {other['workflow_job']['run_id']}]" \
           f"({link})" in similar
    assert "100% like **LM Eval PCP 4xB200**: cuda-oom:" in similar
    (check,) = fake.check_runs(REPO, head)
    assert "Similar failures elsewhere" in (check.output["summary"] or "") + (
        check.output["text"] or "")
    for comment in fake.issue_comments(REPO, 9):
        assert "Similar failures" not in comment.body and "Prior failing runs" not in comment.body
    (clean_check,) = fake.check_runs(REPO, clean)
    assert "Similar failures" not in (clean_check.output["summary"] or "") + (
        clean_check.output["text"] or "")


def test_workflow_run_delivery_records_the_run(tmp_path: Path) -> None:
    run_event = copy.deepcopy(load_payload("workflow_run.completed.with-pull-requests"))
    run_event["installation"] = {"id": 11, "node_id": "x"}
    run_event["repository"].update(full_name=REPO)
    run_id = str(run_event["workflow_run"]["id"])

    async def scenario() -> None:
        async with live_app(tmp_path) as app:
            assert await app.deliver("workflow_run", run_event) == 202
            await app.settle()
            index = app.handler.context.failure_index
            assert index is not None and index.has_run("github-actions", run_id)
            assert app.fake.writes() == []  # recorded from the payload alone

    asyncio.run(scenario())
