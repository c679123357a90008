"""End to end on the fake GitHub: a `workflow_job` webhook is ingested, then the review of a
PR that changes the config the failed job ran shows it under "Prior failing runs"."""

from __future__ import annotations

import copy
from datetime import timedelta
from pathlib import Path

from bot.evidence.actions import ingest_workflow_job
from bot.evidence.index import SqliteFailureIndex
from bot.evidence.lookup import evidence_decorator, index_digest
from bot.evidence.section import SECTION_TITLE
from bot.github.review_flow import ReviewRequest, review_pull_request
from bot.render.markdown import SUMMARY_MARKER
from tests.evidence.factories import GLM_CONFIG, NOW, pcp_oom_log
from tests.fakegithub import load_payload
from tests.github.kit import BOT, NAME, OWNER, REPO, TEST_RULES, app_side, new_fake, push, run
from tests.github.kit import workflow as ci_workflow

CONFIG_BASE = "model_name: nvidia/GLM-5.2-NVFP4\nenv:\n  VLLM_USE_V2_MODEL_RUNNER: '1'\n"
CONFIG_HEAD = CONFIG_BASE + "  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n"


def test_review_shows_the_webhook_ingested_failure(tmp_path: Path) -> None:
    fake = new_fake()
    head = push(fake, 7, {GLM_CONFIG: (CONFIG_BASE, CONFIG_HEAD),
                          ".github/workflows/ci.yml": (ci_workflow(), ci_workflow(silenced=True))},
                tag="h1", title="[CI] Stabilize GLM-5.2 PCP evaluation")
    nightly = fake.add_workflow_run(REPO, head_sha="9" * 40, head_branch="main",
                                    name="LM Eval", path=".github/workflows/lm-eval.yml",
                                    event="schedule", created_at=NOW - timedelta(hours=16))
    failed = fake.add_job(nightly.id, name="LM Eval PCP 4xB200", log=pcp_oom_log().decode(),
                          started_at=NOW - timedelta(hours=16),
                          completed_at=NOW - timedelta(hours=15))
    payload = copy.deepcopy(load_payload("workflow_job.completed.failure.with-organization"))
    payload["repository"].update(full_name=REPO, html_url=f"https://github.com/{REPO}")
    payload["workflow_job"].update(
        id=failed.id, run_id=nightly.id, name=failed.name, head_sha=nightly.head_sha,
        head_branch="main", workflow_name="LM Eval",
        html_url=f"https://github.com/{REPO}/actions/runs/{nightly.id}/job/{failed.id}",
        started_at="2026-08-04T14:00:00Z", completed_at="2026-08-04T15:00:00Z")
    index = SqliteFailureIndex(tmp_path / "ci.db")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            record = await ingest_workflow_job(payload, app.driver, index, NOW)
            assert record is not None and record.category == "cuda-oom"
            request = ReviewRequest(
                OWNER, NAME, 7, bot_login=BOT, rules=TEST_RULES,
                decorate=evidence_decorator(index, now=NOW),
                extra_digest=index_digest(index, REPO),
            )
            outcome = await app.run(review_pull_request(request, None))
            assert outcome.report is not None
            assert [title for title, _ in outcome.report.sections] == [SECTION_TITLE]

    run(scenario())
    index.close()
    (summary,) = [c for c in fake.issue_comments(REPO, 7) if SUMMARY_MARKER in c.body]
    assert f"#### {SECTION_TITLE}" in summary.body
    assert "LM Eval PCP 4xB200 · Actions LM Eval run" in summary.body
    assert f"/actions/runs/{nightly.id}/job/{failed.id}" in summary.body
    assert "**broken trunk**" in summary.body
    assert "cuda-oom: `[rank3]:" in summary.body
    assert "Server failed to start within 1200 seconds" in summary.body
    (check,) = fake.check_runs(REPO, head)
    assert SECTION_TITLE in (check.output["summary"] or "") + (check.output["text"] or "")
