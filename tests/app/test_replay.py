"""`ci-stability replay PAYLOAD --event NAME` drives one delivery through the App."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.app.e2e_kit import pr_payload
from tests.app.helpers import SECRET
from tests.fakegithub import running_fake_github
from tests.github.kit import APP_ID, REPO, app_keys, new_fake, push, workflow

ROOT = Path(__file__).resolve().parents[2]


def _replay(tmp_path: Path, api_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_STAB"))}
    env.update({"GITHUB_APP_ID": str(APP_ID), "GITHUB_PRIVATE_KEY": app_keys()[0],
                "GITHUB_WEBHOOK_SECRET": SECRET, "GITHUB_API_URL": api_url,
                "CI_STABILITY_DB": str(tmp_path / "replay.db"),
                "CI_STABILITY_WRITE_SPACING": "0", "PYTHONPATH": str(ROOT)})
    return subprocess.run([sys.executable, "-m", "bot", "replay", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def test_replay_reviews_the_pull_request(tmp_path: Path) -> None:
    fake = new_fake()
    with running_fake_github(fake):
        head = push(fake, 7, {".github/workflows/ci.yml": (workflow(), workflow(silenced=True))},
                    tag="h1")
        payload = tmp_path / "opened.json"
        payload.write_text(json.dumps(pr_payload("opened", 7, head)))
        done = _replay(tmp_path, fake.url, str(payload), "--event", "pull_request")
        assert done.returncode == 0, done.stderr
        assert "handled" in done.stdout
        (check,) = fake.check_runs(REPO, head)
        assert check.status == "completed" and check.conclusion == "neutral"
        assert fake.violations == []


def test_replay_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    done = _replay(tmp_path, "http://127.0.0.1:9", str(bad), "--event", "pull_request")
    assert done.returncode == 2 and "not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr
