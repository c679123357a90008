"""End to end on the fake GitHub: a `workflow_job` webhook is ingested, then the review of a
PR that changes the config the failed job ran shows it under "Prior failing runs"."""

from __future__ import annotations

from pathlib import Path

from bot.evidence.actions import ingest_workflow_job
from bot.evidence.index import SqliteFailureIndex
from bot.evidence.lookup import evidence_decorator, index_digest
from bot.evidence.section import SECTION_TITLE
from bot.github.review import ReviewRequest, review_pull_request
from bot.render.markers import SUMMARY as SUMMARY_MARKER
from tests.evidence.factories import GLM_CONFIG, NOW, nightly_oom_on_fake_github
from tests.github.kit import BOT, NAME, OWNER, REPO, TEST_RULES, app_side, new_fake, push, run
from tests.github.kit import workflow as ci_workflow

CONFIG_BASE = "model_name: nvidia/GLM-5.2-NVFP4\nenv:\n  VLLM_USE_V2_MODEL_RUNNER: '1'\n"
CONFIG_HEAD = CONFIG_BASE + "  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n"


def test_review_shows_the_webhook_ingested_failure(tmp_path: Path) -> None:
    fake = new_fake()
    head = push(fake, 7, {GLM_CONFIG: (CONFIG_BASE, CONFIG_HEAD),
                          ".github/workflows/ci.yml": (ci_workflow(), ci_workflow(silenced=True))},
                tag="h1", title="[CI] Stabilize GLM-5.2 PCP evaluation")
    payload = nightly_oom_on_fake_github(fake, REPO)
    nightly_id, job_id = payload["workflow_job"]["run_id"], payload["workflow_job"]["id"]
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
    assert f"/actions/runs/{nightly_id}/job/{job_id}" in summary.body
    assert "**broken trunk**" in summary.body
    assert "cuda-oom: `[rank3]:" in summary.body
    assert "Server failed to start within 1200 seconds" in summary.body
    (check,) = fake.check_runs(REPO, head)
    assert SECTION_TITLE in (check.output["summary"] or "") + (check.output["text"] or "")
