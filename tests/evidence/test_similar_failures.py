"""Similar failures beside the prior failing runs, read from a real SQLite file and the real
PostgreSQL (pg_trgm): the same root cause on other jobs and branches, and a near-duplicate
wording of it, are shown once each, bounded; a clean PR gets nothing."""

from __future__ import annotations

import dataclasses

import pytest

from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.index import SqlFailureIndex
from bot.evidence.lookup import evidence_decorator, prior_failing_runs, similar_failures
from bot.evidence.section import SECTION_TITLE, SIMILAR_SUMMARY, similar_block
from bot.evidence.similar import MAX_SIMILAR, Similar, SimilarLine
from tests.conftest import make_snapshot
from tests.evidence.factories import GLM_CONFIG, NOW, ci_log, job, pcp_oom_log

REPO = "vllm-project/vllm"
OOM = "vllm-issue-51071-cuda-oom-b200-pcp.log"  # the OOM alone, without the config's name
NCCL = "vllm-issue-42183-nccl-unhandled-cuda-error.log"
NCCL_OMNI = "vllm-omni-issue-4163-nccl-distbackenderror.log"  # the same failure, reworded


def _pr(path: str = GLM_CONFIG) -> PullRequestSnapshot:
    base = "model_name: nvidia/GLM-5.2-NVFP4\nenv:\n  VLLM_USE_V2_MODEL_RUNNER: '1'\n"
    snapshot = make_snapshot([{"path": path, "base": base, "head": base + "  X: '1'\n"}])
    return dataclasses.replace(snapshot, repo=REPO, number=51015, base_ref="main",
                               head_ref="fix-ci")


def _load(index: SqlFailureIndex) -> None:
    rows = [
        # Related through the config: the PCP OOM, twice on its own job.
        job("pcp-1", log=pcp_oom_log(), hours_ago=15),
        job("pcp-2", log=pcp_oom_log(), hours_ago=30),
        # The same OOM on another job, on a PR branch and on main: one line, counted twice.
        job("dist-1", name="Distributed Tests (4xB200)", log=ci_log(OOM), hours_ago=5,
            branch="feature", pr=51200, commit="d" * 40),
        job("dist-2", name="Distributed Tests (4xB200)", log=ci_log(OOM), hours_ago=20),
        # Related: NCCL's failure under a job that names the config; its near-duplicate
        # wording from vllm-omni ran on a job that does not.
        job("nccl-1", name="GLM PCP smoke", log=ci_log(NCCL), hours_ago=8,
            mentions=(GLM_CONFIG,)),
        job("omni-1", name="Omni distributed", log=ci_log(NCCL_OMNI), hours_ago=9),
        # Not similar, another repository, out of the window, or a pass.
        job("sigbus", name="CPU tests", log=ci_log("pytorch-gha-test-file-sigbus.log")),
        job("elsewhere", name="Distributed Tests (4xB200)", log=ci_log(OOM), repo="o/r"),
        job("ancient", name="Distributed Tests (4xB200)", log=ci_log(OOM), hours_ago=24 * 20),
        job("passed", name="Nightly B200", conclusion="success", hours_ago=2),
    ]
    for row in rows:
        index.upsert_job(row, now=NOW)


@pytest.fixture
def index(empty_index: SqlFailureIndex) -> SqlFailureIndex:
    _load(empty_index)
    return empty_index


def test_same_family_elsewhere_is_shown_once_per_job(index: SqlFailureIndex) -> None:
    snapshot = _pr()
    relevance = prior_failing_runs(index, snapshot, now=NOW)
    assert {r.job.job_id for r in relevance.related} == {"pcp-1", "nccl-1"}
    similar = similar_failures(index, relevance, REPO)
    shown = [(line.job.job_id, line.like.job_id, line.occurrences) for line in similar.lines]
    assert shown == [("dist-1", "pcp-1", 2), ("omni-1", "nccl-1", 1)]
    assert similar.lines[0].similarity == 1.0 and 0.4 <= similar.lines[1].similarity < 1.0
    assert similar.omitted == 0
    assert index.trigram == index.path.startswith("postgresql://")  # which path answered


def test_the_review_section_carries_them_collapsed_with_links(index: SqlFailureIndex) -> None:
    decorate = evidence_decorator(index, now=NOW)
    report = decorate(Report(findings=()), _pr())
    ((title, body),) = report.sections
    assert title == SECTION_TITLE
    table, similar = body.split("<details>", 1)
    assert "dist-1" not in table and "omni-1" not in table
    assert similar.startswith(f"<summary>{SIMILAR_SUMMARY} (2)</summary>")
    assert "[Distributed Tests (4xB200) · Buildkite ci #run-dist-1]" in similar
    assert "(https://buildkite.com/vllm/ci/builds/1#dist-1)" in similar
    assert "on #51200, 2×; 100% like **LM Eval PCP 4xB200**" in similar
    assert "like **GLM PCP smoke**" in similar and "Omni distributed" in similar
    for absent in ("sigbus", "elsewhere", "ancient", "pcp-2"):
        assert f"#{absent})" not in similar
    assert similar.rstrip().endswith("</details>")


def test_a_clean_pr_asks_for_and_shows_nothing(index: SqlFailureIndex) -> None:
    snapshot = _pr("docs/unrelated.md")
    relevance = prior_failing_runs(index, snapshot, now=NOW)
    assert relevance.related == ()
    assert similar_failures(index, relevance, REPO).lines == ()
    report = Report(findings=())
    assert evidence_decorator(index, now=NOW)(report, snapshot) == report


def test_the_list_is_bounded(index: SqlFailureIndex) -> None:
    for n in range(MAX_SIMILAR + 3):
        index.upsert_job(job(f"many-{n}", name=f"Shard {n}", log=ci_log(OOM), hours_ago=n + 1),
                         now=NOW)
    relevance = prior_failing_runs(index, _pr(), now=NOW)
    similar = similar_failures(index, relevance, REPO)
    # 8 shards, the distributed job and the omni job: 10 groups, 5 shown, 5 counted.
    assert len(similar.lines) == MAX_SIMILAR and similar.omitted == 5
    assert {line.job.job_id for line in similar.lines} == {f"many-{n}" for n in range(4)} | {
        "dist-1"}  # the exact repeats first (newest first), the 48 % rewording left out
    decorate = evidence_decorator(index, now=NOW)
    body = decorate(Report(findings=()), _pr()).sections[0][1]
    assert f"{SIMILAR_SUMMARY} (10)" in body and "…and 5 more." in body


def test_hostile_names_and_lines_stay_inert() -> None:
    hostile = job("x", name="@admin <!-- ci-stability:summary --> [x](javascript:1)",
                  log=ci_log(OOM), branch="`main` <b>", url="javascript:alert(1)")
    like = job("y", name="**LM** @team")
    block = similar_block(Similar((SimilarLine(hostile, 0.5, like, 1),), 0), NOW)
    assert "@admin" not in block and "@team" not in block  # no mention
    assert "<!--" not in block and "&lt;!--" in block  # no forged marker
    assert "on `` `main` <b> ``;" in block  # HTML only inside a code span, where it is text
    assert "like **\\*\\*LM\\*\\* @\u200bteam**" in block  # the bold is not broken
    assert "\\[x\\](javascript:1)" in block  # escaped brackets: text, not a link
    assert "alert" not in block  # an unsafe URL is no link target: the title stays text
    assert block.count("<details>") == 1 and block.rstrip().endswith("</details>")
