"""`ci-stability serve` as real subprocesses on a fake GitHub: start, find the port,
post signed webhooks, see which replica holds a delivery. Shared by the crash tests
and bench/bench_replicas_crash.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.store import open_store
from tests.app.helpers import SECRET, headers
from tests.github.kit import APP_ID, app_keys

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


def poll(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@contextmanager
def serve(tmp_path: Path, api_url: str, db: str | None = None,
          extra_env: dict[str, str] | None = None,
          ) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """One `serve` process on `db` (default: a SQLite file in tmp_path); SIGTERM at exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_STAB"))}
    env.update({
        "GITHUB_APP_ID": str(APP_ID), "GITHUB_PRIVATE_KEY": app_keys()[0],
        "GITHUB_WEBHOOK_SECRET": SECRET, "GITHUB_API_URL": api_url,
        "CI_STABILITY_DB": db or str(tmp_path / "app.db"), "CI_STABILITY_DEBOUNCE_SECONDS": "0",
        "CI_STABILITY_WRITE_SPACING": "0", "PYTHONPATH": str(ROOT),
        "METRICS_PORT": "0",  # replicas side by side: each its own free port
        **(extra_env or {}),
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


def post(base: str, data: dict[str, object], delivery_id: str, event: str = "pull_request") -> int:
    body = json.dumps(data).encode()
    request = urllib.request.Request(f"{base}/webhook", data=body, method="POST",
                                     headers=headers(event, body, SECRET, delivery_id))
    with urllib.request.urlopen(request, timeout=30) as response:
        return int(response.status)


def recorded_check(db: str, repo: str, number: int) -> bool:
    """Whether the review recorded its in_progress check run (it started publishing)."""
    store = open_store(db)
    try:
        state = store.get_pr_state(repo, number)
    finally:
        store.close()
    return bool((state or {}).get("check"))


def holder_pid(db: str, delivery_id: str) -> int | None:
    """The pid of the replica whose lease holds the delivery (owner is host:pid:rand)."""
    store = open_store(db)
    try:
        row = store.db.execute("SELECT lease_owner FROM deliveries WHERE id = ?",
                               (delivery_id,)).fetchone()
    finally:
        store.close()
    if row is None or not row[0]:
        return None
    return int(str(row[0]).rsplit(":", 2)[1])
