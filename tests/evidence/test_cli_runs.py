"""`ci-stability runs search|backfill|prune` as a user runs them (exit codes, output)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest

from bot.cli.runs import main
from bot.evidence.index import JobQuery, SqliteFailureIndex
from tests.evidence.factories import GLM_CONFIG, NOW, ci_log, job, pcp_oom_log
from tests.fakebuildkite import FakeBuildkite, make_build, make_job
from tests.fakegithub import running_fake_github


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "ci.db")
    index = SqliteFailureIndex(path)
    index.upsert_job(job("81913", log=pcp_oom_log(), hours_ago=15, run_id="81913", pr=51015),
                     now=NOW)
    index.upsert_job(job("nccl", name="Distributed Tests (2 GPUs)", hours_ago=5,
                         log=ci_log("vllm-issue-42183-nccl-unhandled-cuda-error.log")), now=NOW)
    index.upsert_job(job("pass", conclusion="success", hours_ago=1), now=NOW)
    index.upsert_job(job("old", log=pcp_oom_log(), hours_ago=60 * 24), now=NOW)
    index.close()
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), now=NOW)
    out, err = capsys.readouterr()
    return code, out, err


def test_search_by_file(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "search", "--db", db, "--file", GLM_CONFIG)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        "2026-08-04 15:00  failure  buildkite ci #81913  LM Eval PCP 4xB200")
    assert "    on main, cccccccccccc, PR #51015" in out
    assert "cuda-oom (line 44): [rank3]" in out
    assert "surface symptom (line 53): ERROR tests/evals/gsm8k/" in out
    assert "nccl" not in out.lower() and "old" not in out


def test_search_filters_and_json(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "search", "--db", db, "--category", "nccl-error",
                        "--format", "json")
    assert code == 0
    (found,) = json.loads(out)
    assert found["job_name"] == "Distributed Tests (2 GPUs)"
    assert found["finished_at"] == "2026-08-05T01:00:00Z"
    assert found["signature"].startswith("nccl-error: ")
    code, out, _ = _run(capsys, "search", "--db", db, "--job", "lm eval", "--since", "90",
                        "--format", "json")
    assert sorted(j["job_id"] for j in json.loads(out)) == ["81913", "old"]
    code, out, _ = _run(capsys, "search", "--db", db, "--signature", "allocate <size>")
    assert code == 0 and out.count("LM Eval PCP 4xB200") == 1
    code, out, _ = _run(capsys, "search", "--db", db, "--all", "--job", "LM Eval")
    assert "success" in out
    code, out, _ = _run(capsys, "search", "--db", db, "--job", "nothing-like-this")
    assert out == "no matching jobs in the index\n"


@pytest.mark.parametrize("argv, message", [
    ((), "missing command"),
    (("search", "--since", "soon"), "expected a whole number of days"),
    (("search", "--format", "xml"), "invalid choice"),
    (("backfill",), "backfill needs --github OWNER/REPO or --buildkite ORG/PIPELINE"),
    (("backfill", "--github", "a/b", "--buildkite", "c/d"), "not allowed with"),
    (("backfill", "--buildkite", "vllm/ci", "--workflow", "x.yml"), "only applies to --github"),
    (("backfill", "--github", "not-a-repo"), "expected OWNER/REPO"),
    (("prune",), "required: --older-than"),
])
def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...],
                             message: str) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "x")
    monkeypatch.setenv("CI_STABILITY_DB", str(tmp_path / "ci.db"))
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_missing_tokens_and_bad_databases(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "BUILDKITE_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    db = str(tmp_path / "ci.db")
    code, _, err = _run(capsys, "backfill", "--db", db, "--github", "o/r")
    assert code == 2 and "GITHUB_TOKEN is not set" in err
    code, _, err = _run(capsys, "backfill", "--db", db, "--buildkite", "vllm/ci")
    assert code == 2 and "BUILDKITE_API_TOKEN is not set" in err
    code, _, err = _run(capsys, "search", "--db", str(tmp_path / "no" / "such" / "dir.db"))
    assert code == 2 and "cannot open the failure index" in err and "Traceback" not in err


def test_prune(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "prune", "--db", db, "--older-than", "30")
    assert (code, out) == (0, "removed 1 jobs older than 30 days\n")


@contextmanager
def _fake_buildkite_thread(fake: FakeBuildkite) -> Iterator[FakeBuildkite]:
    """The fake on its own loop, so the CLI's `asyncio.run` can call it."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(fake.start(), loop).result(10)
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_backfill_buildkite(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeBuildkite()
    created = (NOW - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    fake.add_build(make_build(81913, [make_job("oom", "LM Eval PCP 4xB200", number=81913)],
                              created_at=created), logs={"oom": pcp_oom_log()})
    db = str(tmp_path / "ci.db")
    with _fake_buildkite_thread(fake):
        monkeypatch.setenv("BUILDKITE_API_TOKEN", fake.token)
        monkeypatch.setenv("BUILDKITE_API_URL", fake.url)
        code, out, err = _run(capsys, "backfill", "--db", db, "--buildkite", "vllm/ci")
        assert (code, err) == (0, "")
        assert out == ("indexed 1 builds (0 already indexed), 1 jobs, 1 failures, "
                       "1 logs analysed\n")
        monkeypatch.setenv("BUILDKITE_API_TOKEN", "wrong")
        code, out, err = _run(capsys, "backfill", "--db", db, "--buildkite", "vllm/ci")
        assert code == 1 and "rejected BUILDKITE_API_TOKEN" in err and "wrong" not in err
        assert "rerun the same command to resume" in err
    index = SqliteFailureIndex(db)
    assert index.jobs(JobQuery())[0].category == "cuda-oom"
    index.close()


def test_backfill_github(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    with running_fake_github() as fake:
        fake.add_personal_token("ghp_cli", "indexer")
        run = fake.add_workflow_run("o/r", head_sha="1" * 40, created_at=NOW - timedelta(hours=1))
        fake.add_job(run.id, name="lint", log=ci_log("pytorch-gha-cxx-compile-error.log").decode(),
                     started_at=NOW, completed_at=NOW)
        monkeypatch.setenv("GITHUB_TOKEN", "ghp_cli")
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        db = str(tmp_path / "ci.db")
        code, out, err = _run(capsys, "backfill", "--db", db, "--github", "o/r", "--days", "2")
        assert (code, err) == (0, "")
        assert out == "indexed 1 runs (0 already indexed), 1 jobs, 1 failures, 1 logs analysed\n"
        code, out, _ = _run(capsys, "search", "--db", db, "--category", "build-error")
        assert "lint" in out
