"""Relevance (which indexed failures relate to a PR) and Dr. CI-style classification."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.index import Coverage, JobRecord, SqliteFailureIndex
from bot.evidence.lookup import prior_failing_runs
from bot.evidence.needles import NeedleKind, needles_for
from bot.evidence.relevance import Classification, describe_freshness, find_related
from tests.conftest import make_snapshot
from tests.evidence.factories import GLM_CONFIG, NOW, ci_log, job, pcp_oom_log

XEON_WORKFLOW = ".github/workflows/pr-test-xeon.yml"
XEON_HEAD = """name: PR Test (Xeon)
on: [pull_request]
jobs:
  unit-test:
    name: unit-test (${{ matrix.part }})
    runs-on: xeon
    steps:
      - name: Run CPU tests
        run: python3 run_suite.py --suite per-commit-cpu --timeout-per-file 1500
"""


def _pr(files: list[dict[str, str]], *, number: int = 51015, body: str = "",
        head_ref: str = "fix-ci") -> PullRequestSnapshot:
    snapshot = make_snapshot(files, body=body)
    return dataclasses.replace(snapshot, repo="vllm-project/vllm", number=number,
                               base_ref="main", head_ref=head_ref)


def _glm_pr() -> PullRequestSnapshot:
    base = "model_name: nvidia/GLM-5.2-NVFP4\nenv:\n  VLLM_USE_V2_MODEL_RUNNER: '1'\n"
    head = base + "  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n"
    return _pr([{"path": GLM_CONFIG, "base": base, "head": head}])


def test_needles_of_an_eval_config_a_test_file_and_a_workflow() -> None:
    snapshot = _pr([
        {"path": GLM_CONFIG, "base": "a: 1\n", "head": "a: 2\n"},
        {"path": "test/registered/cpu/test_x.py", "base": "x = 1\n", "head": "x = 2\n"},
        {"path": "tests/conftest.py", "base": "x = 1\n", "head": "x = 2\n"},
        {"path": XEON_WORKFLOW, "base": XEON_HEAD.replace("1500", "900"), "head": XEON_HEAD},
    ], number=1)
    found = {(n.kind, n.text) for n in needles_for(snapshot)}
    assert (NeedleKind.CONFIG_STEM, "GLM-5.2-NVFP4-TP1-PCP4-EP") in found
    assert (NeedleKind.PATH, GLM_CONFIG) in found
    assert (NeedleKind.FILE_NAME, "test_x.py") in found
    assert (NeedleKind.WORKFLOW_FILE, XEON_WORKFLOW) in found
    assert (NeedleKind.WORKFLOW_NAME, "pr test (xeon)") in found
    assert (NeedleKind.JOB_LABEL, "run cpu tests") in found
    # Generic names are only needles as full paths: they would match every job.
    assert (NeedleKind.FILE_NAME, "conftest.py") not in found
    assert (NeedleKind.PATH, "tests/conftest.py") in found


def test_vllm_51015_the_pcp_oom_is_found_for_the_config_change() -> None:
    """The Buildkite job whose pytest layer only timed out, found by its config stem."""
    failing = job("bk-81913", log=pcp_oom_log(), hours_ago=15)
    unrelated = job("bk-other", name="Distributed Tests (2 GPUs)", hours_ago=14,
                    log=ci_log("vllm-issue-42183-nccl-unhandled-cuda-error.log"))
    passing_elsewhere = job("bk-pass", conclusion="success", commit="d" * 40, hours_ago=2)
    relevance = find_related(_glm_pr(), [failing, unrelated, passing_elsewhere], now=NOW)
    (related,) = relevance.related
    assert related.job.job_id == "bk-81913"
    assert related.job.category == "cuda-oom"
    assert "memory allocation failed with OOM" in (related.job.line or "")
    assert "Server failed to start within 1200 seconds" in (related.job.surface or "")
    # The stem is 40 lines away from the OOM: the log mentions and the timeout tie them.
    assert "GLM-5.2-NVFP4-TP1-PCP4-EP" not in " ".join(related.job.context)
    kinds = {m.needle.kind for m in related.matches}
    assert NeedleKind.CONFIG_STEM in kinds
    assert {m.where for m in related.matches} <= {"log", "surface symptom"}
    assert related.paths == (GLM_CONFIG,)
    # It failed on main, on a commit where it never passed: broken trunk.
    assert related.classification is Classification.BROKEN_TRUNK


def _xeon_job(job_id: str, name: str, log_name: str | None, **fields: Any) -> JobRecord:
    return job(job_id, name=name, provider="github-actions", pipeline="PR Test (Xeon)",
               workflow_path=XEON_WORKFLOW, repo="sgl-project/sglang",
               log=ci_log(log_name) if log_name else None, **fields)


def test_classification_broken_trunk_flaky_recurring_new() -> None:
    nccl = "vllm-issue-42183-nccl-unhandled-cuda-error.log"
    oom = "pytorch-gha-cuda-oom-fp64-cast.log"
    imp = "pytorch-gha-importerror-missing-so.log"
    cxx = "pytorch-gha-cxx-compile-error.log"
    jobs = [
        # unit-test (a): fails on PR #300 and on main with the same signature.
        _xeon_job("a-pr", "unit-test (a)", nccl, branch="f300", pr=300, commit="a1" * 20,
                  hours_ago=3),
        _xeon_job("a-main", "unit-test (a)", nccl, branch="main", commit="a2" * 20, hours_ago=8),
        # unit-test (b): failed, then passed on retry, on the same commit.
        _xeon_job("b-1", "unit-test (b)", oom, branch="f301", pr=301, commit="b1" * 20,
                  hours_ago=5),
        _xeon_job("b-2", "unit-test (b)", None, conclusion="success", attempt=2, branch="f301",
                  pr=301, commit="b1" * 20, hours_ago=4),
        # unit-test (c): the same failure on two other PRs.
        _xeon_job("c-302", "unit-test (c)", imp, branch="f302", pr=302, commit="c1" * 20,
                  hours_ago=30),
        _xeon_job("c-303", "unit-test (c)", imp, branch="f303", pr=303, commit="c2" * 20,
                  hours_ago=6),
        # unit-test (d): seen once.
        _xeon_job("d-304", "unit-test (d)", cxx, branch="f304", pr=304, commit="d1" * 20,
                  hours_ago=7),
    ]
    snapshot = dataclasses.replace(_pr([
        {"path": XEON_WORKFLOW, "base": XEON_HEAD.replace("1500", "900"), "head": XEON_HEAD},
    ], number=999), repo="sgl-project/sglang")
    relevance = find_related(snapshot, jobs, now=NOW)
    by_name = {r.job.job_name: r for r in relevance.related}
    assert set(by_name) == {"unit-test (a)", "unit-test (b)", "unit-test (c)", "unit-test (d)"}

    trunk = by_name["unit-test (a)"]
    assert trunk.classification is Classification.BROKEN_TRUNK
    assert trunk.job.job_id == "a-pr" and trunk.base_failures == 1 and trunk.occurrences == 2

    flaky = by_name["unit-test (b)"]
    assert flaky.classification is Classification.FLAKY
    assert flaky.passed_on_same_commit is not None
    assert flaky.passed_on_same_commit.job_id == "b-2"

    recurring = by_name["unit-test (c)"]
    assert recurring.classification is Classification.RECURRING
    assert recurring.job.job_id == "c-303" and recurring.other_prs == (302,)
    assert recurring.occurrences == 2
    assert recurring.first_seen == NOW - timedelta(hours=30)
    assert recurring.last_seen == NOW - timedelta(hours=6)

    new = by_name["unit-test (d)"]
    assert new.classification is Classification.NEW and new.occurrences == 1
    # Related through the workflow file itself.
    assert {m.needle.kind for m in new.matches} >= {NeedleKind.WORKFLOW_FILE}
    # Newest first.
    assert [r.job.job_id for r in relevance.related] == ["a-pr", "b-1", "c-303", "d-304"]


def test_a_failure_that_always_passed_on_retry_on_main_is_flaky_not_broken() -> None:
    log = ci_log("vllm-issue-51071-cuda-oom-b200-pcp.log")
    jobs = [
        job("m-1", log=log, hours_ago=6, commit="1" * 40, mentions=(GLM_CONFIG,)),
        job("m-2", conclusion="success", attempt=2, hours_ago=5, commit="1" * 40),
    ]
    (related,) = find_related(_glm_pr(), jobs, now=NOW).related
    assert related.classification is Classification.FLAKY


def test_window_and_freshness_are_stated() -> None:
    old = job("old", log=pcp_oom_log(), hours_ago=20 * 24)
    relevance = find_related(_glm_pr(), [old], now=NOW, window_days=14,
                             coverage=Coverage(10, 4, NOW - timedelta(days=20),
                                               NOW - timedelta(hours=3)))
    assert relevance.related == ()
    assert relevance.window_start == NOW - timedelta(days=14)
    assert relevance.freshness() == (
        "window: last 14 days; index covers 2026-07-16 … 2026-08-05 (10 jobs); "
        "newest run 3 h old")
    stale = describe_freshness(Coverage(1, 1, NOW - timedelta(days=9), NOW - timedelta(days=5)),
                               NOW, 14)
    assert "newest run 5 d old — stale" in stale
    assert "holds no runs" in describe_freshness(Coverage(0, 0, None, None), NOW, 14)


def test_file_names_match_as_whole_tokens_only() -> None:
    snapshot = _pr([{"path": "test/registered/cpu/test_amx.py", "base": "a\n", "head": "b\n"}])
    stub = job("stub", mentions=("test/registered/cpu/test_amx.pyi",), log_note="x")
    longer = job("longer", mentions=("test/registered/cpu/my_test_amx.py",))
    node = job("node", mentions=("registered/cpu/test_amx.py::TestAMX::test_decode[bf16]",))
    relevance = find_related(snapshot, [stub, longer, node], now=NOW)
    assert [r.job.job_id for r in relevance.related] == ["node"]


def test_a_pipeline_label_in_the_hunk_matches_the_buildkite_job() -> None:
    base = "steps:\n- label: \":gpu: LM Eval PCP 4xB200\"\n  timeout_in_minutes: 60\n"
    snapshot = _pr([{"path": ".buildkite/test-pipeline.yaml", "base": base,
                     "head": base.replace("60", "90")}])
    failing = job("bk", log=ci_log("vllm-issue-51071-cuda-oom-b200-pcp.log"))
    (related,) = find_related(snapshot, [failing], now=NOW).related
    assert related.matches[0].needle.kind is NeedleKind.JOB_LABEL
    assert related.matches[0].where == "job name"


def test_matrix_job_names_match_the_templated_name() -> None:
    snapshot = _pr([{"path": XEON_WORKFLOW, "base": XEON_HEAD.replace("1500", "900"),
                     "head": XEON_HEAD}])
    failing = job("gha", name="unit-test (3)", provider="github-actions", pipeline="Other",
                  log=ci_log("pytorch-gha-cxx-compile-error.log"))
    (related,) = find_related(snapshot, [failing], now=NOW).related
    assert [m.needle.text for m in related.matches] == ["unit-test"]


def test_the_result_is_capped() -> None:
    jobs = [job(f"j{n}", name=f"LM Eval {n}", log=pcp_oom_log(), hours_ago=n + 1)
            for n in range(30)]
    relevance = find_related(_glm_pr(), jobs, now=NOW, limit=10)
    assert len(relevance.related) == 10 and relevance.omitted == 20


def test_prior_failing_runs_from_the_index(tmp_path: Path) -> None:
    index = SqliteFailureIndex(tmp_path / "ci.db")
    index.upsert_job(job("bk-81913", log=pcp_oom_log(), hours_ago=15), now=NOW)
    # Same signature, passed on retry on its commit; and an unrelated failure.
    index.upsert_job(job("bk-retry-1", log=pcp_oom_log(), hours_ago=40, commit="e" * 40,
                         branch="feature", pr=51000), now=NOW)
    index.upsert_job(job("bk-retry-2", conclusion="success", attempt=2, hours_ago=39,
                         commit="e" * 40, branch="feature", pr=51000), now=NOW)
    index.upsert_job(job("bk-other", name="Distributed Tests (2 GPUs)", hours_ago=14,
                         log=ci_log("vllm-issue-42183-nccl-unhandled-cuda-error.log")), now=NOW)
    relevance = prior_failing_runs(index, _glm_pr(), now=NOW)
    index.close()
    (related,) = relevance.related
    assert related.job.job_id == "bk-81913" and related.occurrences == 2
    assert related.classification is Classification.BROKEN_TRUNK
    assert relevance.coverage is not None and relevance.coverage.jobs == 4
    assert "newest run 14 h old" in relevance.freshness()
