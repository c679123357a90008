"""End to end: a Buildkite `job.finished` webhook reaches the App's index and the next
review of the config that job ran shows it — vLLM #51015's OOM behind a timeout."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.app.e2e_kit import live_app, pr_payload
from tests.evidence.factories import GLM_CONFIG, NOW, pcp_oom_log
from tests.fakebuildkite import FakeBuildkite, make_build, make_job, make_pipeline
from tests.github.kit import REPO, new_fake, push

TOKEN = "buildkite-webhook-token"
JOB = "0190f5a0-0000-4000-8000-000000081913"
BASE = "model_name: nvidia/GLM-5.2-NVFP4\nenv:\n  VLLM_USE_V2_MODEL_RUNNER: '1'\n"
HEAD = BASE + "  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n"


def test_buildkite_webhook_feeds_the_review(tmp_path: Path) -> None:
    fake = new_fake()
    head = push(fake, 7, {GLM_CONFIG: (BASE, HEAD)}, tag="h1",
                title="[CI] Stabilize GLM-5.2 PCP evaluation")

    async def scenario() -> None:
        buildkite = FakeBuildkite()
        await buildkite.start()
        job = make_job(JOB, "LM Eval PCP 4xB200", number=81913)
        build = make_build(81913, [job])
        pipeline = make_pipeline(repository=f"https://github.com/{REPO}.git")
        build["pipeline"] = pipeline
        buildkite.add_build(build, logs={JOB: pcp_oom_log()})
        body = json.dumps({"event": "job.finished", "job": job, "pipeline": pipeline,
                           "build": {k: v for k, v in build.items()
                                     if k not in {"jobs", "pipeline"}}}).encode()
        try:
            async with live_app(tmp_path, fake, buildkite_webhook_token=TOKEN,
                                buildkite_api_token=buildkite.token,
                                buildkite_api_url=buildkite.url) as app:
                app.handler.context.clock = NOW.timestamp
                url = f"{app.url}/webhooks/buildkite"
                bad = {"X-Buildkite-Event": "job.finished", "X-Buildkite-Token": "nope"}
                async with app.session.post(url, data=body, headers=bad) as response:
                    assert response.status == 401
                good = {**bad, "X-Buildkite-Token": TOKEN}
                async with app.session.post(url, data=body, headers=good) as response:
                    assert response.status == 202
                index = app.handler.context.failure_index
                assert index is not None

                def indexed() -> bool:
                    return index.coverage().jobs == 1

                for _ in range(200):
                    if indexed():
                        break
                    await asyncio.sleep(0.05)
                assert indexed()
                await app.deliver("pull_request", pr_payload("opened", 7, head))
                await app.settle()
                summary = next(c for c in fake.issue_comments(REPO, 7)
                               if "ci-stability:summary" in c.body)
                assert "Prior failing runs" in summary.body
                assert "LM Eval PCP 4xB200" in summary.body and "cuda-oom" in summary.body
        finally:
            await buildkite.close()

    asyncio.run(scenario())
