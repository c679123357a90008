"""`serve` as a real process: bad settings, SIGTERM, and kill -9 in mid-delivery."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import aiohttp
import pytest

from bot.app.compose import confirm_bot_login
from bot.app.settings import Settings, SettingsError
from bot.store import connect, open_store
from tests.app.helpers import SECRET, headers, payload_bytes, rsa_pem
from tests.app.serve_kit import serve
from tests.fakegithub import FakeGitHub
from tests.github.kit import APP_ID, app_keys

ROOT = Path(__file__).resolve().parents[2]
ENTRY = Path(__file__).with_name("serve_entry.py")
TIMEOUT = 60.0


def poll(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def environment(tmp_path: Path, mode: str) -> dict[str, str]:
    key = tmp_path / "app.pem"
    key.write_text(rsa_pem())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_STAB"))}
    env.update({
        "GITHUB_APP_ID": "4242", "GITHUB_PRIVATE_KEY_PATH": str(key),
        "GITHUB_WEBHOOK_SECRET": SECRET, "CI_STABILITY_DB": str(tmp_path / "app.db"),
        "METRICS_PORT": "0",
        "CI_STABILITY_DEBOUNCE_SECONDS": "0", "SERVE_TEST_MODE": mode,
        "SERVE_TEST_JOURNAL": str(tmp_path / "journal.txt"),
        "PYTHONPATH": str(ROOT),
    })
    return env


@contextmanager
def server(tmp_path: Path, mode: str, **extra: str,
           ) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    log = tmp_path / f"serve-{time.monotonic_ns()}.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, str(ENTRY), "--host", "127.0.0.1", "--port", "0"],
            env={**environment(tmp_path, mode), **extra}, cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=err,
        )
    try:
        port: list[int] = []

        def listening() -> bool:
            assert proc.poll() is None, log.read_text()
            for line in log.read_text().splitlines():
                entry = json.loads(line)
                if entry["msg"] == "listening":
                    port.append(entry["port"])
                    return True
            return False

        poll(listening, "the server to listen")
        yield proc, f"http://127.0.0.1:{port[0]}", log
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def post(base: str, event: str, body: bytes, delivery_id: str) -> int:
    request = urllib.request.Request(f"{base}/webhook", data=body, method="POST",
                                     headers=headers(event, body, delivery_id=delivery_id))
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def journal(tmp_path: Path) -> list[str]:
    path = tmp_path / "journal.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_bad_settings_exit_2_with_every_problem_and_no_traceback(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_STAB"))}
    env.update({"GITHUB_APP_ID": "twelve", "PORT": "0", "PYTHONPATH": str(ROOT)})
    done = subprocess.run([sys.executable, "-m", "bot.cli.serve"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 2
    for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET", "PORT"):
        assert name in done.stderr
    assert "Traceback" not in done.stderr


def test_sigterm_stops_gracefully(tmp_path: Path) -> None:
    with server(tmp_path, "finish") as (proc, base, log):
        with urllib.request.urlopen(f"{base}/healthz", timeout=TIMEOUT) as response:
            assert json.loads(response.read())["store"] == "ok"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=TIMEOUT) == 0
        assert '"msg": "stopped"' in log.read_text()


def test_a_delivery_interrupted_by_kill_9_completes_exactly_once_after_restart(
    tmp_path: Path,
) -> None:
    body = payload_bytes("pull_request.opened")
    with server(tmp_path, "block") as (proc, base, _):
        assert post(base, "pull_request", body, "crash-1") == 202
        poll(lambda: journal(tmp_path) == ["start crash-1 1"], "the handler to start")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
    store = connect(tmp_path / "app.db")
    interrupted = store.get_delivery("crash-1")
    assert interrupted is not None and interrupted.status == "running"
    store.close()

    with server(tmp_path, "finish") as (proc, base, _):
        def finished() -> bool:
            return "finish crash-1" in journal(tmp_path)

        poll(finished, "the delivery to be completed after the restart")
        assert post(base, "pull_request", body, "crash-1") == 200  # GitHub redelivers: no-op
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=TIMEOUT) == 0

    assert journal(tmp_path) == ["start crash-1 1", "start crash-1 2", "finish crash-1"]
    store = connect(tmp_path / "app.db")
    done = store.get_delivery("crash-1")
    assert done is not None and done.status == "done" and done.attempts == 2
    assert store.counts() == {"pending": 0, "running": 0, "done": 1, "dead": 0, "superseded": 0}
    store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_every_202_survives_a_kill_9_right_after_it_and_is_handled_once(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest,
) -> None:
    # Batches are written off the event loop (a thread; on PostgreSQL a binary COPY):
    # a 202 must still mean committed, so SIGKILL as soon as the last one arrives.
    db = request.getfixturevalue("pg_url") if backend == "postgresql" else str(
        tmp_path / "app.db")
    body = payload_bytes("pull_request.opened")
    ids = [f"burst-{i}" for i in range(40)]
    with server(tmp_path, "finish", CI_STABILITY_DB=db, CI_STABILITY_WORKERS="0") as (
            proc, base, _):
        with ThreadPoolExecutor(max_workers=16) as pool:
            statuses = list(pool.map(lambda i: post(base, "pull_request", body, i), ids))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
    assert statuses == [202] * len(ids)
    store = open_store(db)
    assert store.counts()["pending"] == len(ids)
    store.close()

    with server(tmp_path, "finish", CI_STABILITY_DB=db) as (proc, base, _):
        poll(lambda: sum(line.startswith("finish") for line in journal(tmp_path)) >= len(ids),
             "every delivery to be handled after the restart")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=TIMEOUT) == 0
    assert sorted(journal(tmp_path)) == sorted(
        [f"start {i} 1" for i in ids] + [f"finish {i}" for i in ids])


@pytest.mark.parametrize("writer", ["0", "1"])
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_every_202_survives_a_kill_9_in_mid_load(
    tmp_path: Path, backend: str, writer: str, request: pytest.FixtureRequest,
) -> None:
    # Batches are confirmed while requests keep coming (on the loop, on threads or by
    # the intake writer process): a SIGKILL at any moment may cut requests off, but
    # never a 202 from its committed row.
    db = request.getfixturevalue("pg_url") if backend == "postgresql" else str(
        tmp_path / "app.db")
    body = payload_bytes("pull_request.opened")
    acked: list[str] = []

    def lane(n: int) -> None:
        for i in range(100_000):
            try:
                if post(base, "pull_request", body, f"load-{n}-{i}") == 202:
                    acked.append(f"load-{n}-{i}")
            except OSError:  # the server is gone
                return

    with server(tmp_path, "finish", CI_STABILITY_DB=db, CI_STABILITY_WORKERS="0",
                CI_STABILITY_INTAKE_PROCESS=writer) as (
            proc, base, _), ThreadPoolExecutor(max_workers=8) as pool:
        lanes = [pool.submit(lane, n) for n in range(8)]
        poll(lambda: len(acked) >= 150, "150 deliveries acknowledged")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
        for done in lanes:
            done.result()
    store = open_store(db)
    kept = {r[0] for r in store.db.execute(
        "SELECT id FROM inbox UNION ALL SELECT id FROM deliveries").fetchall()}
    store.close()
    assert len(acked) >= 150 and set(acked) <= kept


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, str(ENTRY), "--host", "127.0.0.1", "--port",
                               str(port)], env=environment(tmp_path, "finish"), cwd=ROOT,
                              capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_metrics_are_served_on_their_own_loopback_port_only(tmp_path: Path) -> None:
    port = _free_port()
    with serve(tmp_path, "http://127.0.0.1:9", extra_env={"METRICS_PORT": str(port)}) as (
            _, base):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as resp:
            assert resp.status == 200
            assert b"ci_stability_webhook_deliveries_total" in resp.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as resp:
            assert resp.status == 200
        try:
            urllib.request.urlopen(f"{base}/metrics", timeout=30)
            raise AssertionError("/metrics answered on the webhook port")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404


def _app_settings(fake_url: str, **overrides: object) -> Settings:
    settings = Settings(app_id=APP_ID, private_key=app_keys()[0], webhook_secret=SECRET,
                        api_url=fake_url)
    return dataclasses.replace(settings, **overrides)  # type: ignore[arg-type]


def _confirm(slug: str, **overrides: object) -> tuple[Settings, list[str]]:
    async def scenario() -> tuple[Settings, list[str]]:
        fake = FakeGitHub(check_responses=True)
        fake.register_app(APP_ID, app_keys()[1], slug=slug)
        url = await fake.start()
        try:
            async with aiohttp.ClientSession() as session:
                settings = await confirm_bot_login(_app_settings(url, **overrides), session)
            return settings, [c.operation_id for c in fake.calls]
        finally:
            await fake.close()

    return asyncio.run(scenario())


def test_the_bot_login_is_read_from_get_app_at_start() -> None:
    settings, calls = _confirm("ci-stability-bot")
    assert settings.bot_login == "ci-stability-bot[bot]" and calls == ["apps/get-authenticated"]
    adopted, _ = _confirm("acme-ci")  # the default login was not this App's: use the App's
    assert adopted.bot_login == "acme-ci[bot]"


def test_a_configured_bot_login_that_is_not_the_apps_is_an_error_naming_both() -> None:
    with pytest.raises(SettingsError) as info:
        _confirm("acme-ci", bot_login="ci-stability-bot[bot]", bot_login_set=True)
    assert "'ci-stability-bot[bot]'" in str(info.value) and "'acme-ci[bot]'" in str(info.value)
    kept, _ = _confirm("acme-ci", bot_login="acme-ci[bot]", bot_login_set=True)
    assert kept.bot_login == "acme-ci[bot]"


def test_get_app_out_of_reach_keeps_the_configured_login() -> None:
    async def scenario() -> Settings:
        async with aiohttp.ClientSession() as session:
            return await confirm_bot_login(_app_settings("http://127.0.0.1:9"), session)

    assert asyncio.run(scenario()).bot_login == "ci-stability-bot[bot]"
