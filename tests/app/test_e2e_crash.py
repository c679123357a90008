"""`ci-stability serve` killed with SIGKILL mid-review, restarted: the review completes once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.app.e2e_kit import pr_payload
from tests.app.helpers import SECRET, headers
from tests.fakegithub import FakeGitHub, running_fake_github
from tests.github.kit import APP_ID, REPO, app_keys, new_fake, push, workflow

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
WF = ".github/workflows/ci.yml"


def poll(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@contextmanager
def serve(tmp_path: Path, api_url: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_STAB"))}
    env.update({
        "GITHUB_APP_ID": str(APP_ID), "GITHUB_PRIVATE_KEY": app_keys()[0],
        "GITHUB_WEBHOOK_SECRET": SECRET, "GITHUB_API_URL": api_url,
        "CI_STABILITY_DB": str(tmp_path / "app.db"), "CI_STABILITY_DEBOUNCE_SECONDS": "0",
        "CI_STABILITY_WRITE_SPACING": "0", "PYTHONPATH": str(ROOT),
    })
    log = tmp_path / f"serve-{time.monotonic_ns()}.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1",
                                 "--port", "0"], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=err)
    port: list[int] = []

    def listening() -> bool:
        assert proc.poll() is None, log.read_text()
        for line in log.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("msg") == "listening":
                port.append(int(entry["port"]))
                return True
        return False

    try:
        poll(listening, "the server to listen")
        yield proc, f"http://127.0.0.1:{port[0]}"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _recorded_check(db: Path) -> bool:
    with sqlite3.connect(db, timeout=10) as conn:
        try:
            row = conn.execute("SELECT state FROM pr_state WHERE repo = ? AND number = 7",
                               (REPO,)).fetchone()
        except sqlite3.OperationalError:  # tables not created yet
            return False
    return row is not None and bool((json.loads(row[0]) or {}).get("check"))


def post(base: str, data: dict[str, object], delivery_id: str) -> int:
    body = json.dumps(data).encode()
    request = urllib.request.Request(f"{base}/webhook", data=body, method="POST",
                                     headers=headers("pull_request", body, SECRET, delivery_id))
    with urllib.request.urlopen(request, timeout=30) as response:
        return int(response.status)


def test_kill_9_mid_review_then_restart_completes_once(tmp_path: Path) -> None:
    fake: FakeGitHub = new_fake()
    # The first attempt hangs on the file list, so the kill lands mid-review.
    fake.inject_delay("GET", r"/pulls/7/files", seconds=30, times=1)
    with running_fake_github(fake):
        head = push(fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
        with serve(tmp_path, fake.url) as (proc, base):
            assert post(base, pr_payload("opened", 7, head), "crash-1") == 202
            # The in_progress check is created and recorded just before the (hanging)
            # file list: kill once it is recorded, so the kill lands mid-review.
            poll(lambda: _recorded_check(tmp_path / "app.db"), "the review to start")
            proc.kill()
            proc.wait()
        assert fake.reviews(REPO, 7) == []  # nothing was published before the kill
        with serve(tmp_path, fake.url):
            poll(lambda: any(c.status == "completed" for c in fake.check_runs(REPO, head)),
                 "the review to complete after the restart")
            poll(lambda: len(fake.issue_comments(REPO, 7)) == 1, "the summary comment")
        assert len(fake.reviews(REPO, 7)) == 1
        runs = fake.check_runs(REPO, head)
        assert len(runs) == 1 and runs[0].status == "completed"  # the same check, finished
        assert fake.violations == []
