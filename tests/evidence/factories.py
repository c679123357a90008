"""Job records for the index / relevance / section tests, analysed from real CI logs.

The logs are the real excerpts vendored under tests/data/ci-logs/ (see its README for
sources and licences); a record's root cause is whatever the extractor finds in them.
"""

from __future__ import annotations

import dataclasses
import io
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.evidence.index import JobRecord
from bot.evidence.logstream import LogAnalysis, analyse_read

CI_LOGS = Path(__file__).resolve().parents[1] / "data" / "ci-logs"
NOW = datetime(2026, 8, 5, 6, 0, tzinfo=UTC)
GLM_CONFIG = "tests/evals/gsm8k/configs/GLM-5.2-NVFP4-TP1-PCP4-EP.yaml"
GLM_NODE = "tests/evals/gsm8k/test_gsm8k_correctness.py::test_gsm8k_correctness"


def ci_log(name: str) -> bytes:
    return (CI_LOGS / name).read_bytes()


def pcp_oom_log() -> bytes:
    """vLLM's "LM Eval PCP (4xB200)" failure: the real OOM excerpt (vllm#51071) inside
    the pytest run that reported only the server-start timeout (as vllm#51015 describes).

    The wrapper lines are written here; the OOM lines are the vendored excerpt verbatim.
    The config is named 40 lines before the OOM, outside the extractor's context.
    """
    head = (
        "[2026-08-04T14:40:01Z] --- :pytest: Running GSM8K accuracy evals\n"
        f"[2026-08-04T14:40:09Z] {GLM_NODE}[GLM-5.2-NVFP4-TP1-PCP4-EP] "
        f"Loading config {GLM_CONFIG}\n"
        + "".join(f"[2026-08-04T14:41:{i:02d}Z] (EngineCore pid=2181) INFO loading shard {i}\n"
                  for i in range(40))
    ).encode()
    tail = (
        "[2026-08-04T15:22:07Z] =========================== short test summary info "
        "============================\n"
        f"[2026-08-04T15:22:07Z] ERROR {GLM_NODE}[GLM-5.2-NVFP4-TP1-PCP4-EP] - RuntimeError: "
        "Server failed to start within 1200 seconds\n"
        "[2026-08-04T15:22:10Z] 🚨 Error: The command exited with status 1\n"
    ).encode()
    return head + ci_log("vllm-issue-51071-cuda-oom-b200-pcp.log") + b"\n" + tail


def analyse(data: bytes) -> LogAnalysis:
    return analyse_read(io.BytesIO(data).read)


def job(job_id: str, *, name: str = "LM Eval PCP 4xB200", conclusion: str = "failure",
        log: bytes | None = None, hours_ago: float = 10, provider: str = "buildkite",
        pipeline: str = "ci", commit: str = "c" * 40, branch: str = "main",
        pr: int | None = None, attempt: int = 1, repo: str = "vllm-project/vllm",
        **fields: Any) -> JobRecord:
    finished = NOW - timedelta(hours=hours_ago)
    values: dict[str, Any] = {
        "run_id": f"run-{job_id}",
        "url": f"https://buildkite.com/vllm/{pipeline}/builds/1#{job_id}",
        "started_at": finished - timedelta(minutes=40), "finished_at": finished, **fields,
    }
    record = JobRecord(
        provider=provider, job_id=job_id, attempt=attempt, repo=repo, pipeline=pipeline,
        job_name=name, conclusion=conclusion, branch=branch, commit_sha=commit, pr_number=pr,
        **values,
    )
    if log is not None:
        found = analyse(log).job_fields()
        found["mentions"] = (*record.mentions, *found["mentions"])
        record = dataclasses.replace(record, **found)
    return record


def nightly_oom_on_fake_github(fake: Any, repo: str) -> dict[str, Any]:
    """Seed the fake GitHub with a failed nightly "LM Eval PCP 4xB200" job whose log is
    the #51015 OOM behind a server-start timeout; returns its `workflow_job` delivery."""
    return failed_job_on_fake_github(
        fake, repo, job_name="LM Eval PCP 4xB200", log=pcp_oom_log().decode(),
        workflow="LM Eval", path=".github/workflows/lm-eval.yml", event="schedule",
        branch="main", head_sha="9" * 40, hours_ago=15)


def failed_job_on_fake_github(fake: Any, repo: str, *, job_name: str, log: str, workflow: str,
                              path: str, event: str, branch: str, head_sha: str,
                              hours_ago: float) -> dict[str, Any]:
    """Seed the fake GitHub with one failed Actions job (a run of one hour that ended
    `hours_ago` before NOW); returns its `workflow_job` delivery."""
    import copy

    from tests.fakegithub import load_payload

    started, completed = NOW - timedelta(hours=hours_ago + 1), NOW - timedelta(hours=hours_ago)
    run = fake.add_workflow_run(repo, head_sha=head_sha, head_branch=branch, name=workflow,
                                path=path, event=event, created_at=started)
    failed = fake.add_job(run.id, name=job_name, log=log, started_at=started,
                          completed_at=completed)
    payload: dict[str, Any] = copy.deepcopy(
        load_payload("workflow_job.completed.failure.with-organization"))
    payload["repository"].update(full_name=repo, html_url=f"https://github.com/{repo}")
    payload["workflow_job"].update(
        id=failed.id, run_id=run.id, name=job_name, head_sha=head_sha, head_branch=branch,
        workflow_name=workflow,
        html_url=f"https://github.com/{repo}/actions/runs/{run.id}/job/{failed.id}",
        started_at=f"{started:%Y-%m-%dT%H:%M:%SZ}", completed_at=f"{completed:%Y-%m-%dT%H:%M:%SZ}")
    return payload
