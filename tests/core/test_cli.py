"""The CLI as users run it: formats, exit codes, and bad input without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main

WORKFLOW_PATCH = (
    "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\n"
    "--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n"
    "@@ -1,3 +1,4 @@\n jobs:\n   test:\n+    continue-on-error: true\n     runs-on: ubuntu\n"
)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, data: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def test_json_schema_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["review", "--patch", write(tmp_path, "p.diff", WORKFLOW_PATCH),
                        "--format", "json", "--fail-level", "none"], capsys)
    data = json.loads(out)
    assert code == 0
    assert data["version"] == 1 and data["tool"]["name"] == "ci-stability-bot"
    assert set(data) >= {"findings", "suppressed", "errors", "conclusion"}
    for finding in data["findings"]:
        assert set(finding) >= {"rule", "severity", "path", "line", "end_line", "message",
                                "suggestion", "fingerprint"}


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif", "github"])
def test_every_format_renders(fmt: str, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["review", "--patch", write(tmp_path, "p.diff", WORKFLOW_PATCH),
                          "--format", fmt, "--fail-level", "none"], capsys)
    assert code == 0 and err == ""
    if fmt in ("json", "sarif"):
        json.loads(out)


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["review"], capsys)[0] == 2
    assert run(["review", "--patch", str(tmp_path / "missing.diff")], capsys)[0] == 2
    code, _, err = run(["review", "--patch", write(tmp_path, "p.diff", WORKFLOW_PATCH),
                        "--rules", "no-such-rule"], capsys)
    assert code == 2 and "unknown rule" in err
    assert run(["explain", "no-such-rule"], capsys)[0] == 2
    assert run(["frobnicate"], capsys)[0] == 2
    code, _, err = run(["review", "--pr", write(tmp_path, "pr.json", "{not json")], capsys)
    assert code == 2 and "not valid JSON" in err
    code, _, err = run(["review", "--pr", write(tmp_path, "pr.json", '{"files": [{}]}')], capsys)
    assert code == 2 and "files[0].filename" in err


def test_bad_config_is_a_usage_error_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = write(tmp_path, "c.yml", "rules:\n  nope: false\n")
    code, _, err = run(["review", "--patch", write(tmp_path, "p.diff", WORKFLOW_PATCH),
                        "--config", cfg], capsys)
    assert code == 2 and "c.yml:2" in err and "Traceback" not in err
    code, _, err = run(["config", "check", cfg], capsys)
    assert code == 1 and "c.yml:2: `rules.nope`: unknown rule" in err


def test_non_utf8_and_binary_and_garbage_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latin = WORKFLOW_PATCH.replace("ubuntu", "ubunt\u00fc").encode("latin-1")
    code, out, _ = run(["review", "--patch", write(tmp_path, "l.diff", latin),
                        "--format", "json", "--fail-level", "none"], capsys)
    assert code == 0 and "not valid UTF-8" in out
    code, out, _ = run(["review", "--patch", write(tmp_path, "b.diff", b"\x00\xff" * 1000),
                        "--format", "json", "--fail-level", "none"], capsys)
    assert code == 0 and json.loads(out)["errors"]
    code, out, _ = run(["review", "--patch", write(tmp_path, "g.diff", "hello\nworld\n"),
                        "--format", "json"], capsys)
    assert code == 0 and "does not look like a unified diff" in out


def test_huge_description_and_many_files(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    body = write(tmp_path, "body.md", "[CI] fix flaky OOM " * 600_000)  # ~11 MB
    files = "".join(
        f"diff --git a/tests/t{i}.py b/tests/t{i}.py\n--- a/tests/t{i}.py\n+++ b/tests/t{i}.py\n"
        f"@@ -1 +1 @@\n-x = {i}\n+x = {i + 1}\n"
        for i in range(100_000)
    )
    code, out, err = run(["review", "--patch", write(tmp_path, "big.diff", files),
                          "--body-file", body, "--title", "[CI] fix", "--format", "json",
                          "--fail-level", "none"], capsys)
    assert code == 0, err
    assert json.loads(out)["conclusion"] in ("success", "neutral", "failure")


def test_rules_listing_formats(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["rules", "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 0 and {"id", "severity", "summary"} <= set(data[0])
    code, out, _ = run(["explain", data[0]["id"]], capsys)
    assert code == 0 and data[0]["id"] in out


def test_console_entry_point_runs_as_a_process(tmp_path: Path) -> None:
    patch = write(tmp_path, "p.diff", WORKFLOW_PATCH)
    done = subprocess.run([sys.executable, "-m", "bot", "review", "--patch", "-",
                           "--format", "json", "--fail-level", "none"],
                          input=Path(patch).read_bytes(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["version"] == 1


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_git_range_source_reads_full_texts_and_config_from_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / ".github" / "ci-stability.yml").write_text("fail_on: notice\n")
    wf = repo / ".github" / "workflows" / "ci.yml"
    wf.write_text("jobs:\n  test:\n    runs-on: ubuntu\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    wf.write_text("jobs:\n  test:\n    runs-on: ubuntu\n    timeout-minutes: 30\n")
    _git(repo, "commit", "-qam", "[CI] add timeout\n\nBody text.")
    code, out, err = run(["review", "--git", "HEAD~1..HEAD", "--repo", str(repo),
                          "--format", "json"], capsys)
    assert code in (0, 1), err
    assert json.loads(out)["errors"] == []
    code, _, err = run(["review", "--git", "nope..HEAD", "--repo", str(repo)], capsys)
    assert code == 2 and "git" in err


def test_evidence_db_adds_prior_failing_runs_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dataclasses
    from datetime import UTC, datetime, timedelta

    from bot.evidence.index import SqliteFailureIndex
    from tests.evidence.factories import ci_log, job, pcp_oom_log

    now = datetime.now(UTC)
    record = dataclasses.replace(job("81913", log=pcp_oom_log()),
                                 started_at=now - timedelta(hours=3),
                                 finished_at=now - timedelta(hours=2))
    # The same OOM on a job that names no changed file: a similar failure, not a row.
    elsewhere = dataclasses.replace(
        job("81990", name="Distributed Tests (4xB200)",
            log=ci_log("vllm-issue-51071-cuda-oom-b200-pcp.log")),
        started_at=now - timedelta(hours=2), finished_at=now - timedelta(hours=1))
    index = SqliteFailureIndex(tmp_path / "ci.db")
    index.upsert_job(record, now=now)
    index.upsert_job(elsewhere, now=now)
    index.close()
    example = Path(__file__).resolve().parents[2] / "examples/vllm-51015-glm-pcp-allocator.json"
    code, out, err = run(["review", "--pr", str(example), "--format", "markdown",
                          "--evidence-db", str(tmp_path / "ci.db")], capsys)
    assert code == 0, err
    assert "Prior failing runs" in out and "LM Eval PCP 4xB200" in out and "cuda-oom" in out
    assert "Similar failures elsewhere (1)" in out
    assert "[Distributed Tests (4xB200) · Buildkite ci #run-81990]" in out
    code, _, err = run(["review", "--pr", str(example), "--evidence-db",
                        str(tmp_path / "missing.db")], capsys)
    assert code == 2 and "no such file" in err
