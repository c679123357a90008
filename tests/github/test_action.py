"""The GitHub Action: action.yml and the README's workflow pass GitHub's schemas, and
`ci-stability action` falls back to annotations on a fork's read-only token."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli.action import main
from bot.github.drive_sync import SyncDriver, github_retry
from tests.fakegithub import FakeGitHub, running_fake_github

from .kit import APP_ID, INSTALLATION, REPO, app_keys, push, sole, workflow

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
CHECK_JSONSCHEMA = Path(sys.executable).with_name("check-jsonschema")
PATH = ".github/workflows/ci.yml"
LEAST = {"checks": "write", "pull_requests": "write", "contents": "read", "metadata": "read"}
READ_ONLY = {"checks": "read", "pull_requests": "read", "contents": "read", "metadata": "read"}


def readme_workflows() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    return [b for b in blocks if "\njobs:" in b and "runs-on:" in b]


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True, check=False)


def test_action_yml_passes_githubs_action_schema() -> None:
    done = check_jsonschema("vendor.github-actions", ACTION)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readmes_workflow_passes_githubs_workflow_schema(tmp_path: Path) -> None:
    workflows = readme_workflows()
    assert workflows, "the README shows the workflow to copy"
    for index, text in enumerate(workflows):
        path = tmp_path / f"workflow{index}.yml"
        path.write_text(text)
        done = check_jsonschema("vendor.github-workflows", path)
        assert done.returncode == 0, done.stdout + done.stderr
        data = yaml.safe_load(text)
        job = next(iter(data["jobs"].values()))
        assert data["permissions"] == {}  # least privilege: only what the job grants
        assert job["permissions"] == {"checks": "write", "pull-requests": "write",
                                      "contents": "read"}
        assert "pull_request_target" in data[True]  # YAML 1.1 reads the `on` key as True
        assert all("actions/checkout" not in str(step) for step in job["steps"])


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    broken = tmp_path / "action.yml"
    broken.write_text("name: x\nruns:\n  using: composite\n  steps: oops\n")
    assert check_jsonschema("vendor.github-actions", broken).returncode != 0


def test_action_runs_in_its_own_cached_venv_and_keeps_event_data_out_of_scripts() -> None:
    action = yaml.safe_load(ACTION.read_text())
    steps = action["runs"]["steps"]
    assert set(action["inputs"]) >= {"config", "rules", "fail-level", "reporter"}
    assert set(action["outputs"]) == {"conclusion", "findings", "json", "sarif"}
    setup = next(s for s in steps if str(s.get("uses", "")).startswith("actions/setup-python"))
    assert setup["with"]["update-environment"] is False  # the caller's Python stays as it was
    assert any(str(s.get("uses", "")).startswith("actions/cache") for s in steps)
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert '"$VENV/bin/python" -m pip install' in install["run"]
    assert install["if"] == "steps.cache.outputs.cache-hit != 'true'"
    review = next(s for s in steps if s.get("id") == "review")
    assert '"$VENV/bin/ci-stability" action' in review["run"]
    assert all("${{" not in s.get("run", "") for s in steps)


def seed(gh: FakeGitHub, permissions: dict[str, str], tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, Path]]:
    gh.register_app(APP_ID, app_keys()[1])
    gh.add_installation(INSTALLATION, [REPO], permissions=permissions)
    token = gh.issue_installation_token(INSTALLATION)  # what GITHUB_TOKEN is
    head = push(gh, 7, {PATH: (workflow(), workflow(silenced=True))}, tag="h1")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "pull_request": {"number": 7}}))
    files = {"output": tmp_path / "out.txt", "summary": tmp_path / "summary.md"}
    for key, value in {"GITHUB_TOKEN": token, "GITHUB_API_URL": gh.url,
                       "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_PATH": str(event),
                       "GITHUB_OUTPUT": str(files["output"]), "RUNNER_TEMP": str(tmp_path),
                       "GITHUB_STEP_SUMMARY": str(files["summary"])}.items():
        monkeypatch.setenv(key, value)
    return head, files


def fast(gh: FakeGitHub) -> SyncDriver:
    """The default driver without PyGithub's pauses between requests."""
    return SyncDriver(os.environ["GITHUB_TOKEN"], base_url=gh.url, timeout=2,
                      seconds_between_requests=0, seconds_between_writes=0,
                      retry=github_retry(backoff_factor=0.01))


def outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_least_permissions_publish_everything_without_a_rerun_button(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_fake_github() as gh:
        head, files = seed(gh, LEAST, tmp_path, monkeypatch)
        assert main(["--fail-level", "warning"], fast(gh)) == 1  # the silenced job: a warning
        out = capsys.readouterr().out
        check = sole(gh.check_runs(REPO, head))
        assert check.conclusion == "neutral" and not check.actions
        assert len(gh.reviews(REPO, 7)) == 1 and len(gh.issue_comments(REPO, 7)) == 1
        assert "::warning" not in out and "::error" not in out
        values = outputs(files["output"])
        assert values["conclusion"] == "neutral" and int(values["findings"]) >= 1
        assert json.loads(Path(values["json"]).read_text())["conclusion"] == "neutral"
        assert json.loads(Path(values["sarif"]).read_text())["version"] == "2.1.0"
        assert gh.violations == []


def test_a_forks_read_only_token_falls_back_to_annotations_and_the_step_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_fake_github() as gh:
        head, files = seed(gh, READ_ONLY, tmp_path, monkeypatch)
        assert main(["--fail-level", "none"], fast(gh)) == 0
        out = capsys.readouterr().out
        assert gh.check_runs(REPO, head) == [] and gh.reviews(REPO, 7) == []
        assert gh.issue_comments(REPO, 7) == []
        assert "a pull request from a fork gets a read-only GITHUB_TOKEN" in out
        assert f"::warning file={PATH},line=" in out  # the finding, annotated on its line
        summary = files["summary"].read_text()
        assert "read-only GITHUB_TOKEN" in summary and "| ⚠️ warning |" in summary
        assert outputs(files["output"])["conclusion"] == "neutral"
        assert gh.violations == []


@pytest.mark.parametrize("reporter", ["annotations", "sarif"])
def test_reporters_without_api_writes(reporter: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    with running_fake_github() as gh:
        _, files = seed(gh, LEAST, tmp_path, monkeypatch)
        assert main(["--reporter", reporter], fast(gh)) == 0
        out = capsys.readouterr().out
        assert gh.writes() == []
        assert ("::warning file=" in out) == (reporter == "annotations")
        assert Path(outputs(files["output"])["sarif"]).is_file()


def test_check_reporter_publishes_the_check_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_fake_github() as gh:
        head, _ = seed(gh, LEAST, tmp_path, monkeypatch)
        assert main(["--reporter", "check"], fast(gh)) == 0
        capsys.readouterr()
        assert sole(gh.check_runs(REPO, head)).conclusion == "neutral"
        assert gh.reviews(REPO, 7) == [] and gh.issue_comments(REPO, 7) == []


def test_events_without_a_pull_request_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    event = tmp_path / "push.json"
    event.write_text(json.dumps({"ref": "refs/heads/main"}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "out"))
    assert main([]) == 0
    assert "skipped" in capsys.readouterr().out
    assert outputs(tmp_path / "out")["conclusion"] == "skipped"
