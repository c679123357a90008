"""`ci-stability advise --pr FILE --evidence-db PATH`: offline, with the sync client."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.evidence.index import SqliteFailureIndex
from tests.evidence.factories import NOW, job, pcp_oom_log
from tests.fakeopenai import FakeOpenAI, Reply

PR = "examples/vllm-51015-glm-pcp-allocator.json"
QUOTE = "memory allocation failed with OOM on device 3"


def index_file(tmp_path: Path) -> str:
    path = tmp_path / "index.db"
    index = SqliteFailureIndex(path)
    index.upsert_job(job("j1", log=pcp_oom_log()), now=NOW)
    index.close()
    return str(path)


@pytest.mark.parametrize("stream", ["0", "1"])
def test_advise_prints_a_verified_explanation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str],
                                              stream: str) -> None:
    db = index_file(tmp_path)
    with FakeOpenAI(Reply(f"Likely root cause: OOM.\nEvidence:\n> {QUOTE}\n"
                          "> an invented line that no log has\n"
                          "Does this PR address it: partly.")) as server:
        monkeypatch.setenv("CI_STABILITY_LLM_BASE_URL", server.url)
        monkeypatch.setenv("CI_STABILITY_LLM_MODEL", "local-model")
        monkeypatch.setenv("CI_STABILITY_LLM_STREAM", stream)
        code = main(["advise", "--pr", PR, "--evidence-db", db, "--now", NOW.isoformat()])
        out = capsys.readouterr().out
        assert code == 0
        assert f"> {QUOTE}" in out and "invented line" not in out
        assert "1 quoted line dropped" in out and "tokens (prompt" in out
        assert len(server.requests) == 1
        assert server.headers[0]["Authorization"] == "Bearer not-needed"


def test_advise_reports_a_failing_server_and_a_missing_setting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = index_file(tmp_path)
    for var in ("CI_STABILITY_LLM_BASE_URL", "CI_STABILITY_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    assert main(["advise", "--pr", PR, "--evidence-db", db]) == 2
    assert "the advisor is off" in capsys.readouterr().err
    with FakeOpenAI(Reply(status=500)) as server:
        monkeypatch.setenv("CI_STABILITY_LLM_BASE_URL", server.url)
        monkeypatch.setenv("CI_STABILITY_LLM_MODEL", "local-model")
        monkeypatch.setenv("CI_STABILITY_LLM_MAX_RETRIES", "0")
        code = main(["advise", "--pr", PR, "--evidence-db", db, "--now", NOW.isoformat()])
        assert code == 1 and "answered 500" in capsys.readouterr().err
