"""POST /webhook, /healthz and /metrics over real HTTP on loopback, with real payloads."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from bot.app.jsonlog import JsonFormatter
from bot.app.web import accepts_default, signature_for, signature_ok
from bot.github.calls import ApiCall, ApiResult, Flow
from bot.github.drive_async import drive
from bot.store import Delivery
from tests.app.helpers import SECRET, FakeClock, headers, live_app, payload_bytes, wait_until

LIMITS_SECRET = "It's a Secret to Everybody"
LIMITS_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_signature_matches_githubs_documented_test_vector() -> None:
    assert signature_for(LIMITS_SECRET.encode(), b"Hello, World!") == LIMITS_SIGNATURE
    assert signature_ok(LIMITS_SECRET.encode(), b"Hello, World!", LIMITS_SIGNATURE)
    assert not signature_ok(LIMITS_SECRET.encode(), b"Hello, World?", LIMITS_SIGNATURE)
    assert not signature_ok(b"", b"Hello, World!", LIMITS_SIGNATURE)
    assert not signature_ok(LIMITS_SECRET.encode(), b"Hello, World!", None)
    assert not signature_ok(LIMITS_SECRET.encode(), b"Hello, World!", "sha256=ünïcode")


def test_the_test_vector_is_accepted_over_http_and_a_wrong_one_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", secret=LIMITS_SECRET) as app:
            hdrs = {"X-GitHub-Event": "ping", "X-GitHub-Delivery": "v-1",
                    "X-Hub-Signature-256": LIMITS_SIGNATURE}
            ok = await app.post("ping", b"Hello, World!", headers=hdrs)
            assert ok.status == 200
            bad = await app.post("ping", b"Hello, World?", headers=hdrs)
            assert bad.status == 401

    run(scenario)


def test_a_secret_is_required(tmp_path: Path) -> None:
    async def scenario() -> None:
        with pytest.raises(ValueError, match="secret is required"):
            async with live_app(tmp_path / "w.db", secret=""):
                pass

    run(scenario)


@pytest.mark.parametrize("mangle", ["missing", "wrong-secret", "sha1-only", "tampered-body"])
def test_a_bad_or_missing_signature_is_401_and_nothing_is_stored(tmp_path: Path,
                                                                 mangle: str) -> None:
    body = payload_bytes("pull_request.opened")

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            hdrs = headers("pull_request", body)
            if mangle == "missing":
                del hdrs["X-Hub-Signature-256"]
            elif mangle == "wrong-secret":
                hdrs = headers("pull_request", body, secret="not-the-secret")
            elif mangle == "sha1-only":
                hdrs["X-Hub-Signature"] = "sha1=" + "0" * 40
                del hdrs["X-Hub-Signature-256"]
            resp = await app.post("pull_request", body + (b" " if mangle == "tampered-body"
                                                          else b""), headers=hdrs)
            assert resp.status == 401
            assert sum(app.store.counts().values()) == 0
            assert 'outcome="unauthorized"} 1.0' in app.metrics.render().decode()

    run(scenario)


def test_ping_is_answered_200_and_not_queued(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            resp = await app.post("ping", payload_bytes("ping"))
            assert resp.status == 200
            assert sum(app.store.counts().values()) == 0

    run(scenario)


def test_a_delivery_is_persisted_and_acknowledged_202(tmp_path: Path) -> None:
    body = payload_bytes("pull_request.opened")

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            hdrs = headers("pull_request", body, delivery_id="72d3162e-cc78-11e3-81ab-4c9367dc0958")
            async with app.session.post(app.url("/webhook"), data=body, headers=hdrs) as resp:
                assert resp.status == 202
                assert await resp.json() == {"status": "queued", "delivery_id": hdrs[
                    "X-GitHub-Delivery"]}
            stored = app.store.get_delivery("72d3162e-cc78-11e3-81ab-4c9367dc0958")
            assert stored is not None
            assert (stored.event, stored.action, stored.payload) == ("pull_request", "opened",
                                                                     body)
            assert stored.group_key is None and stored.not_before == stored.received_at

    run(scenario)


def test_a_redelivery_is_stored_once(tmp_path: Path) -> None:
    body = payload_bytes("issue_comment.created")

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            hdrs = headers("issue_comment", body, delivery_id="same-guid")
            first = await app.post("issue_comment", body, headers=hdrs)
            async with app.session.post(app.url("/webhook"), data=body, headers=hdrs) as resp:
                assert (first.status, resp.status) == (202, 200)
                assert await resp.json() == {"status": "duplicate"}
            assert app.store.counts()["pending"] == 1

    run(scenario)


def test_every_202_stands_for_a_committed_row(tmp_path: Path) -> None:
    # Group commit resolves a request only after its transaction committed, so another
    # connection (the CLI, or the next process after a crash) sees the row at once.
    body = payload_bytes("pull_request.synchronize")

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            ids = [f"gc-{i}" for i in range(20)]
            responses = await asyncio.gather(
                *(app.post("pull_request", body, delivery_id=i) for i in ids))
            assert [r.status for r in responses] == [202] * len(ids)
            with sqlite3.connect(tmp_path / "w.db") as conn:  # in the inbox, or promoted
                stored = {row[0] for row in conn.execute(
                    "SELECT id FROM inbox UNION ALL SELECT id FROM deliveries")}
            assert stored == set(ids)

    run(scenario)


ACCEPTED = ["pull_request.opened", "pull_request.synchronize", "pull_request.reopened",
            "pull_request.ready_for_review", "pull_request.edited", "issue_comment.created",
            "check_run.rerequested", "check_run.requested_action", "check_suite.rerequested",
            "installation.created", "installation.deleted", "installation_repositories.added",
            "workflow_job.completed.failure.with-organization", "workflow_run.completed"]
IGNORED = ["pull_request.closed", "pull_request.labeled", "pull_request.converted_to_draft",
           "issue_comment.edited", "issue_comment.deleted", "check_run.completed",
           "check_suite.completed", "check_suite.requested", "workflow_job.in_progress"]


@pytest.mark.parametrize("name", ACCEPTED + IGNORED)
def test_only_handled_events_and_actions_are_queued(tmp_path: Path, name: str) -> None:
    event = name.split(".")[0]
    body = payload_bytes(name)

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            hdrs = headers(event, body)
            async with app.session.post(app.url("/webhook"), data=body, headers=hdrs) as resp:
                assert resp.status == 202
                status = (await resp.json())["status"]
            queued = app.store.counts()["pending"]
            assert (status, queued) == (("queued", 1) if name in ACCEPTED else ("ignored", 0))

    run(scenario)


def test_the_default_filter_is_on_event_and_action() -> None:
    assert accepts_default("installation_target", "renamed")
    assert not accepts_default("pull_request", None)
    assert not accepts_default("push", None)


def test_a_custom_filter_can_be_passed_in(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", accepts=lambda e, a: e == "push") as app:
            body = b'{"ref": "refs/heads/main"}'
            assert (await app.post("push", body)).status == 202
            assert app.store.counts()["pending"] == 1

    run(scenario)


def test_a_synchronize_is_debounced_per_pull_request(tmp_path: Path) -> None:
    clock = FakeClock()

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", clock=clock, debounce=5.0) as app:
            body = payload_bytes("pull_request.synchronize")
            await app.post("pull_request", body, delivery_id="sync-1")
            d = app.store.get_delivery("sync-1")
            assert d is not None and d.group_key == "Codertocat/Hello-World#2"
            assert (d.received_at, d.not_before) == (clock.now, clock.now + 5.0)

    run(scenario)


def test_three_quick_pushes_review_only_the_newest(tmp_path: Path) -> None:
    clock = FakeClock()
    handled: list[str] = []
    template = json.loads(payload_bytes("pull_request.synchronize"))

    async def handler(d: Delivery, payload: object) -> None:
        handled.append(d.json()["pull_request"]["head"]["sha"])

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", handler, clock=clock, debounce=10.0) as app:
            for i, sha in enumerate(["a" * 40, "b" * 40, "c" * 40]):
                template["pull_request"]["head"]["sha"] = sha
                body = json.dumps(template).encode()
                assert (await app.post("pull_request", body, delivery_id=f"push-{i}")).status \
                    == 202
                clock.now += 1.0  # within the 10 s window
            assert app.store.counts()["pending"] == 3  # nothing is due yet
            clock.now += 30.0
            assert app.worker is not None
            app.worker.notify()
            await wait_until(lambda: app.store.counts()["pending"] == 0
                             and app.store.counts()["running"] == 0)
            assert app.store.counts()["superseded"] == 2 and app.store.counts()["done"] == 1

    run(scenario)
    assert handled == ["c" * 40]


def test_a_queued_delivery_is_handled_by_the_workers(tmp_path: Path) -> None:
    handled: list[Delivery] = []

    async def handler(d: Delivery, payload: object) -> None:
        handled.append(d)

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", handler) as app:
            body = payload_bytes("pull_request.opened")
            await app.post("pull_request", body, delivery_id="e2e-1")
            await wait_until(lambda: app.store.counts()["done"] == 1)

    run(scenario)
    assert [(d.id, d.event, d.action, d.attempts) for d in handled] == [
        ("e2e-1", "pull_request", "opened", 1)]


@pytest.mark.parametrize("chunked", [False, True])
def test_an_oversized_body_is_413_and_not_stored(tmp_path: Path, chunked: bool) -> None:
    body = payload_bytes("pull_request.opened")  # ~26 kB against a 4 kB cap

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 1024):
            yield body[start:start + 1024]

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", max_body_bytes=4096) as app:
            data: Any = chunks() if chunked else body
            async with app.session.post(app.url("/webhook"), data=data,
                                        headers=headers("pull_request", body)) as resp:
                assert resp.status == 413
            assert sum(app.store.counts().values()) == 0

    run(scenario)


@pytest.mark.parametrize(("drop", "body"), [
    ("X-GitHub-Event", b"{}"), ("X-GitHub-Delivery", b"{}"), (None, b"not json"),
    (None, b"[1, 2]"),
])
def test_signed_but_malformed_requests_are_400(tmp_path: Path, drop: str | None,
                                               body: bytes) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            hdrs = headers("pull_request", body)
            if drop:
                del hdrs[drop]
            assert (await app.post("pull_request", body, headers=hdrs)).status == 400
            assert sum(app.store.counts().values()) == 0

    run(scenario)


def test_a_form_encoded_delivery_is_stored_as_its_json(tmp_path: Path) -> None:
    payload = payload_bytes("pull_request.reopened")
    body = b"payload=" + quote(payload.decode()).encode()

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            hdrs = headers("pull_request", body, delivery_id="form-1")
            hdrs["Content-Type"] = "application/x-www-form-urlencoded"
            assert (await app.post("pull_request", body, headers=hdrs)).status == 202
            stored = app.store.get_delivery("form-1")
            assert stored is not None and stored.payload == payload

    run(scenario)


METRICS_TOKEN = "scrape-me"
BEARER = {"Authorization": f"Bearer {METRICS_TOKEN}"}


def test_healthz_reports_the_queue_and_503_when_the_store_is_gone(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", metrics_token=METRICS_TOKEN) as app:
            await app.post("pull_request", payload_bytes("pull_request.opened"))
            async with app.session.get(app.url("/healthz")) as resp:
                assert resp.status == 200
                assert await resp.json() == {
                    "status": "ok", "store": "ok", "dead_letters": 0,
                    "queue": {"pending": 1, "running": 0, "done": 0, "dead": 0,
                              "superseded": 0}}
            app.store.close()
            async with app.session.get(app.url("/healthz")) as resp:
                assert resp.status == 503
                assert (await resp.json())["store"] == "unreachable"
            async with app.session.get(app.url("/metrics"), headers=BEARER) as resp:
                assert "ci_stability_store_up 0.0" in await resp.text()

    run(scenario)


def test_metrics_are_not_on_the_webhook_port_without_a_token(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app, \
                app.session.get(app.url("/metrics")) as resp:
            assert resp.status == 404
        async with live_app(tmp_path / "t.db", metrics_token=METRICS_TOKEN) as app:
            for hdrs in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer "}):
                async with app.session.get(app.url("/metrics"), headers=hdrs) as resp:
                    assert resp.status == 401
                    assert "ci_stability" not in await resp.text()

    run(scenario)


def test_metrics_expose_intake_queue_and_github_figures(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", metrics_token=METRICS_TOKEN) as app:
            await app.post("pull_request", payload_bytes("pull_request.opened"))
            await app.post("pull_request", payload_bytes("pull_request.closed"))
            await app.post("pull_request", b"{}", secret="wrong")
            app.metrics.github_call("pulls/list-files", 200)
            app.metrics.github_call("pulls/list-files", 200)
            app.metrics.github_call("checks/create", 403)
            app.metrics.rate_limit_remaining(4321)
            app.metrics.review_latency(2.5)
            async with app.session.get(app.url("/metrics"), headers=BEARER) as resp:
                assert resp.status == 200
                assert resp.headers["Content-Type"].startswith("text/plain")
                text = await resp.text()

        for line in [
            'ci_stability_webhook_deliveries_total{event="pull_request",outcome="accepted"} 1.0',
            'ci_stability_webhook_deliveries_total{event="pull_request",outcome="ignored"} 1.0',
            'ci_stability_webhook_deliveries_total{event="unknown",outcome="unauthorized"} 1.0',
            'ci_stability_queue_deliveries{status="pending"} 1.0',
            "ci_stability_dead_letters 0.0",
            'ci_stability_github_api_calls_total{operation="pulls/list-files",status="200"} 2.0',
            'ci_stability_github_api_calls_total{operation="checks/create",status="403"} 1.0',
            'ci_stability_github_rate_limit_remaining{resource="core"} 4321.0',
            'ci_stability_review_latency_seconds_bucket{le="5.0"} 1.0',
            "ci_stability_review_latency_seconds_count 1.0",
        ]:
            assert line in text, line

    run(scenario)


def test_intake_logs_are_json_with_context_and_never_the_secret(tmp_path: Path) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(secrets=[SECRET]))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            body = payload_bytes("pull_request.synchronize")
            await app.post("pull_request", body, delivery_id="log-1")
            await app.post("pull_request", body, secret="wrong-secret")

    try:
        run(scenario)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    entries = [json.loads(line) for line in stream.getvalue().splitlines()]
    # One line per committed batch (not per request), naming each delivery by event.
    queued = next(e for e in entries if e["msg"] == "deliveries queued")
    assert queued["deliveries"] == {"pull_request": ["log-1"]} and queued["count"] == 1
    assert any(e["msg"] == "webhook rejected" and e["status"] == 401 for e in entries)
    assert SECRET not in stream.getvalue()


def test_readiness_turns_503_on_drain_while_liveness_stays_200(tmp_path: Path) -> None:
    async def handler(d: object, payload: object) -> None:
        return None

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", handler) as app:
            async with app.session.get(app.url("/healthz")) as resp:
                assert resp.status == 200 and (await resp.json())["status"] == "ok"
            assert app.worker is not None
            await app.worker.stop()  # what SIGTERM does first
            async with app.session.get(app.url("/healthz")) as resp:
                assert resp.status == 503 and (await resp.json())["status"] == "draining"
            async with app.session.get(app.url("/healthz/live")) as resp:
                assert resp.status == 200 and (await resp.json()) == {"status": "alive"}
            # Webhooks are still taken (durably) while draining.
            assert (await app.post("pull_request",
                                   payload_bytes("pull_request.opened"))).status == 202
            app.store.close()
            async with app.session.get(app.url("/healthz/live")) as resp:
                assert resp.status == 200  # a database outage is no reason to restart

    run(scenario)


@pytest.mark.parametrize("body", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"action": "opened", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
])
def test_a_signed_payload_nested_100k_deep_is_a_clear_400(tmp_path: Path, body: bytes) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            hdrs = headers("pull_request", body)
            async with app.session.post(app.url("/webhook"), data=body, headers=hdrs) as resp:
                assert resp.status == 400
                assert "nested too deeply" in (await resp.json())["error"]
            assert sum(app.store.counts().values()) == 0

    run(scenario)


@pytest.mark.parametrize("chunked", [False, True])
def test_a_large_badly_signed_body_is_read_through_and_refused(tmp_path: Path,
                                                               chunked: bool) -> None:
    # Larger than the in-memory spool, so the refused body went through the disk part.
    body = payload_bytes("pull_request.opened") * 40  # ~1 MB

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 64 * 1024):
            yield body[start:start + 64 * 1024]

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            hdrs = headers("pull_request", body, secret="not-the-secret")
            data: Any = chunks() if chunked else body
            async with app.session.post(app.url("/webhook"), data=data, headers=hdrs) as resp:
                assert resp.status == 401
                assert (await resp.json())["error"] == "signature does not match"
            good = payload_bytes("pull_request.opened")
            assert (await app.post("pull_request", good, delivery_id="after")).status == 202
            assert app.store.get_delivery("after") is not None
            assert sum(app.store.counts().values()) == 1

    run(scenario)


def test_a_ping_is_answered_while_a_review_step_is_running(tmp_path: Path) -> None:
    """The review's CPU work (a flow step) runs on the pool: here it is held on a gate
    that only the ping's answer opens, so run on the event loop it would deadlock."""
    started, gate = threading.Event(), threading.Event()
    finished: list[str] = []
    stuck: list[bool] = []  # the gate was never opened: the step had blocked the loop

    def review_flow() -> Flow[str]:
        started.set()
        stuck.append(not gate.wait(30))
        result = yield ApiCall("GET", "/after-the-step")
        return str(result.data)

    async def answer(call: ApiCall) -> ApiResult:
        return ApiResult(200, data=call.url)

    with ThreadPoolExecutor(1) as pool:
        async def handler(d: Delivery, payload: object) -> None:
            finished.append(await drive(review_flow(), answer, pool))

        async def scenario() -> None:
            async with live_app(tmp_path / "w.db", handler) as app:
                body = payload_bytes("pull_request.opened")
                assert (await app.post("pull_request", body)).status == 202
                await wait_until(started.is_set)
                ping = b'{"zen": "Design for failure."}'
                async with app.session.post(app.url("/webhook"), data=ping,
                                            headers=headers("ping", ping)) as resp:
                    assert resp.status == 200
                    assert await resp.json() == {"status": "pong"}
                assert not finished  # the review was still in its step
                gate.set()
                await wait_until(lambda: app.store.counts()["done"] == 1)

        run(scenario)
    assert stuck == [False]
    assert finished == ["/after-the-step"]


@pytest.mark.parametrize("chunked", [False, True])
def test_a_large_signed_body_streamed_past_the_spool_is_stored_intact(tmp_path: Path,
                                                                      chunked: bool) -> None:
    data = json.loads(payload_bytes("pull_request.opened"))
    data["pull_request"]["body"] = "ü" * 600_000  # ~1.2 MB, over the 256 KiB spool
    body = json.dumps(data).encode()

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 50_000):
            yield body[start:start + 50_000]

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            hdrs = headers("pull_request", body, delivery_id="big-1")
            sent: Any = chunks() if chunked else body
            async with app.session.post(app.url("/webhook"), data=sent, headers=hdrs) as resp:
                assert resp.status == 202
            stored = app.store.get_delivery("big-1")
            assert stored is not None and stored.payload == body

    run(scenario)
