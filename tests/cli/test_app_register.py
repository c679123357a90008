"""`ci-stability app register` end to end against the fake GitHub: the local page POSTs
the manifest, GitHub redirects back with a code, the code is exchanged once, and the
App's settings and key land in files only their owner can read."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import requests
from gidgethub.apps import get_jwt

from tests.fakegithub import running_fake_github

ROOT = Path(__file__).resolve().parents[2]


class FormReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.action = ""
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.action = values["action"]
        elif tag == "input":
            self.fields[values["name"]] = values["value"]


def start(tmp_path: Path, api_url: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "GITHUB_URL": api_url, "GITHUB_API_URL": api_url}
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "app", "register", "--manifest", str(ROOT / "app.yaml"),
         "--webhook-url", "https://bot.example.org/webhook", "--org", "octo-org",
         "--env-file", str(tmp_path / "app.env"), "--port", "0", "--no-browser",
         "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("Open http://127.0.0.1:"), line + process.stderr.read()
    return process, line.split()[1]


def test_register_creates_the_app_and_writes_its_secrets_mode_0600(tmp_path: Path) -> None:
    with running_fake_github() as gh:
        process, page_url = start(tmp_path, gh.url)
        try:
            page = requests.get(page_url, timeout=10)
            form = FormReader()
            form.feed(page.text)
            assert form.action.startswith(f"{gh.url}/organizations/octo-org/settings/apps/new")
            manifest = json.loads(form.fields["manifest"])
            assert manifest["hook_attributes"]["url"] == "https://bot.example.org/webhook"
            assert manifest["redirect_url"] == page_url + "callback"
            assert manifest["default_permissions"]["checks"] == "write"
            # The browser's part: GitHub answers the form with a redirect to the callback.
            posted = requests.post(form.action, data=form.fields, allow_redirects=False,
                                   timeout=10)
            assert posted.status_code == 302
            forged = posted.headers["Location"].replace("state=", "state=x")
            assert requests.get(forged, timeout=10).status_code == 400
            done = requests.get(posted.headers["Location"], timeout=30)
            assert done.status_code == 200 and "Registered ci-stability-bot" in done.text
            out, err = process.communicate(timeout=30)
        finally:
            process.kill()
        assert process.returncode == 0, err
        env_file = tmp_path / "app.env"
        key_file = tmp_path / "ci-stability-bot.private-key.pem"
        for path in (env_file, key_file):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
        settings = dict(line.split("=", 1) for line in env_file.read_text().splitlines())
        app = gh.state.app
        assert app is not None and settings["GITHUB_APP_ID"] == str(app.app_id)
        assert settings["CI_STABILITY_BOT_LOGIN"] == "ci-stability-bot[bot]"
        assert settings["GITHUB_PRIVATE_KEY_PATH"] == str(key_file)
        assert len(settings["GITHUB_WEBHOOK_SECRET"]) == 40
        assert "Registered the GitHub App ci-stability-bot" in out
        # The key GitHub handed over is the App's: it mints an installation token.
        gh.add_installation(11, None, account="octo-org")
        jwt = get_jwt(app_id=str(app.app_id), private_key=key_file.read_text())
        minted = requests.post(f"{gh.url}/app/installations/11/access_tokens", timeout=10,
                               headers={"Authorization": f"Bearer {jwt}",
                                        "Accept": "application/vnd.github+json"})
        assert minted.status_code == 201
        # A code is good for one exchange.
        code = posted.headers["Location"].split("code=")[1].split("&")[0]
        again = requests.post(f"{gh.url}/app-manifests/{code}/conversions", timeout=10)
        assert again.status_code == 404
        assert gh.count("apps/create-from-manifest") == 2 and gh.violations == []


def test_register_refuses_a_file_that_is_not_a_manifest(tmp_path: Path) -> None:
    bad = tmp_path / "app.yaml"
    bad.write_text("- not\n- a manifest\n")
    done = subprocess.run([sys.executable, "-m", "bot", "app", "register", "--manifest",
                           str(bad), "--webhook-url", "https://x/webhook", "--no-browser"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "not an App manifest" in done.stderr
    assert "Traceback" not in done.stderr
