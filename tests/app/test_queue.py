"""The worker pool against a real SQLite store: success, retries, dead letters, stop."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Callable
from pathlib import Path

from bot.app.jsonlog import JsonFormatter
from bot.app.metrics import Metrics
from bot.app.queue import Worker, exponential_backoff
from bot.errors import PermanentError, RetryableError
from bot.store import Delivery, SqliteStore, connect
from tests.app.helpers import FakeClock, payload_bytes, wait_until


def seed(store: SqliteStore, *ids: str, name: str = "pull_request.opened",
         at: float = 1_000_000_000.0) -> None:
    for i, delivery_id in enumerate(ids):
        store.add_delivery(delivery_id, name.split(".")[0], name.split(".")[1],
                           payload_bytes(name), at + i, at + i, None)


def run(scenario: Callable[[], object]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def make_worker(store: SqliteStore, handler: Callable[[Delivery], object], **kw: object) -> Worker:
    options: dict[str, object] = {"concurrency": 2, "max_attempts": 3,
                                  "backoff": lambda attempt: 0.0, "poll_interval": 0.02}
    options.update(kw)
    return Worker(store, handler, **options)  # type: ignore[arg-type]


def test_a_handled_delivery_is_done_and_counted(tmp_path: Path) -> None:
    store, metrics = connect(tmp_path / "q.db"), Metrics()
    seen: list[str] = []

    async def handler(d: Delivery, payload: object) -> None:
        seen.append(d.id)

    async def scenario() -> None:
        seed(store, "a", "b")
        worker = make_worker(store, handler, metrics=metrics)
        await worker.start()
        await wait_until(lambda: store.counts()["done"] == 2)
        await worker.stop()

    run(scenario)
    assert sorted(seen) == ["a", "b"]
    assert 'ci_stability_deliveries_processed_total{event="pull_request",outcome="done"} 2.0' \
        in metrics.render().decode()


def test_failures_retry_with_backoff_then_dead_letter(tmp_path: Path) -> None:
    store, metrics = connect(tmp_path / "q.db"), Metrics()
    calls: list[int] = []
    backoffs: list[int] = []

    async def handler(d: Delivery, payload: object) -> None:
        calls.append(d.attempts)
        raise ConnectionError("GitHub answered 502")

    def backoff(attempt: int) -> float:
        backoffs.append(attempt)
        return 0.0

    async def scenario() -> None:
        seed(store, "flaky")
        worker = make_worker(store, handler, max_attempts=4, backoff=backoff, metrics=metrics)
        await worker.start()
        await wait_until(lambda: store.counts()["dead"] == 1)
        await worker.stop()

    run(scenario)
    assert calls == [1, 2, 3, 4]
    assert backoffs == [1, 2, 3]  # no backoff after the last attempt: it goes dead
    dead = store.get_delivery("flaky")
    assert dead is not None and dead.status == "dead" and dead.attempts == 4
    assert "ConnectionError: GitHub answered 502" in (dead.last_error or "")
    text = metrics.render().decode()
    assert 'outcome="retry"} 3.0' in text and 'outcome="dead"} 1.0' in text
    assert "ci_stability_dead_letters 1.0" in text


def test_retry_after_overrides_the_backoff(tmp_path: Path) -> None:
    store, clock = connect(tmp_path / "q.db"), FakeClock()

    async def handler(d: Delivery, payload: object) -> None:
        raise RetryableError("secondary rate limit", retry_after=120.0)

    async def scenario() -> None:
        seed(store, "limited", at=clock.now)
        worker = make_worker(store, handler, clock=clock)
        assert await worker.run_once() is True

    run(scenario)
    d = store.get_delivery("limited")
    assert d is not None and d.status == "pending" and d.not_before == clock.now + 120.0
    assert store.claim(clock.now + 119) is None


def test_a_permanent_error_dead_letters_at_once(tmp_path: Path) -> None:
    store = connect(tmp_path / "q.db")
    calls = 0

    async def handler(d: Delivery, payload: object) -> None:
        nonlocal calls
        calls += 1
        raise PermanentError("repository no longer installed")

    async def scenario() -> None:
        seed(store, "gone")
        await make_worker(store, handler, max_attempts=5).run_once()

    run(scenario)
    d = store.get_delivery("gone")
    assert calls == 1 and d is not None and d.status == "dead"
    assert d.last_error == "permanent error: repository no longer installed"


def test_a_delivery_that_keeps_killing_the_process_ends_dead_unhandled(tmp_path: Path) -> None:
    store = connect(tmp_path / "q.db")
    seed(store, "poison")
    for _ in range(3):  # three crashes mid-delivery: claimed, never finished
        assert store.claim(now=2e9) is not None
        store.requeue_running()
    called = False

    async def handler(d: Delivery, payload: object) -> None:
        nonlocal called
        called = True

    async def scenario() -> None:
        await make_worker(store, handler, max_attempts=3).run_once()

    run(scenario)
    d = store.get_delivery("poison")
    assert not called and d is not None and d.status == "dead"
    assert "claimed 4 times" in (d.last_error or "")


def test_start_requeues_deliveries_left_running(tmp_path: Path) -> None:
    store = connect(tmp_path / "q.db")
    seed(store, "interrupted")
    store.claim(now=2e9)  # a previous process died here
    seen: list[int] = []

    async def handler(d: Delivery, payload: object) -> None:
        seen.append(d.attempts)

    async def scenario() -> None:
        worker = make_worker(store, handler)
        await worker.start()
        await wait_until(lambda: store.counts()["done"] == 1)
        await worker.stop()

    run(scenario)
    assert seen == [2]


def test_stop_lets_a_running_handler_finish(tmp_path: Path) -> None:
    store = connect(tmp_path / "q.db")
    started, release = asyncio.Event(), asyncio.Event()

    async def handler(d: Delivery, payload: object) -> None:
        started.set()
        await release.wait()

    async def scenario() -> None:
        seed(store, "slow")
        worker = make_worker(store, handler)
        await worker.start()
        await started.wait()
        stopping = asyncio.create_task(worker.stop(timeout=60))
        await asyncio.sleep(0)
        assert not stopping.done()
        release.set()
        await stopping

    run(scenario)
    assert store.counts()["done"] == 1


def test_stop_hands_back_a_handler_that_does_not_finish(tmp_path: Path) -> None:
    store = connect(tmp_path / "q.db")
    started = asyncio.Event()

    async def handler(d: Delivery, payload: object) -> None:
        started.set()
        await asyncio.Event().wait()  # never finishes

    async def scenario() -> None:
        seed(store, "stuck")
        worker = make_worker(store, handler)
        await worker.start()
        await started.wait()
        await worker.stop(timeout=0)

    run(scenario)
    d = store.get_delivery("stuck")
    assert d is not None and d.status == "pending" and d.last_error == "interrupted by shutdown"


def test_handler_logs_carry_the_delivery_context_and_no_secret(tmp_path: Path) -> None:
    store = connect(tmp_path / "q.db")
    stream = io.StringIO()
    handler_ = logging.StreamHandler(stream)
    handler_.setFormatter(JsonFormatter(secrets=["s3cr3t-value"]))
    logger = logging.getLogger("tests.handler")
    logger.addHandler(handler_)
    logger.setLevel(logging.INFO)

    async def handler(d: Delivery, payload: object) -> None:
        logger.info("publishing with token s3cr3t-value and ghs_%s", "a" * 36)

    async def scenario() -> None:
        seed(store, "ctx", name="pull_request.synchronize")
        await make_worker(store, handler).run_once()

    try:
        run(scenario)
    finally:
        logger.removeHandler(handler_)
    [line] = stream.getvalue().splitlines()
    entry = json.loads(line)
    assert entry["delivery_id"] == "ctx" and entry["event"] == "pull_request"
    assert (entry["repo"], entry["pr"]) == ("Codertocat/Hello-World", 2)
    assert entry["head_sha"] == "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
    assert "s3cr3t-value" not in line and "ghs_aaaa" not in line


def test_exponential_backoff_grows_with_jitter_and_a_cap() -> None:
    low = exponential_backoff(base=2, cap=60, rng=lambda: 0.0)
    high = exponential_backoff(base=2, cap=60, rng=lambda: 1.0)
    assert [low(a) for a in (1, 2, 3, 4)] == [1, 2, 4, 8]
    assert [high(a) for a in (1, 2, 3, 4)] == [2, 4, 8, 16]
    assert high(20) == 60 and low(20) == 30


def test_a_payload_that_is_not_a_json_object_is_dead_lettered_unhandled(tmp_path: Path) -> None:
    # Intake only scans the first bytes, so a body that is not JSON can reach the queue.
    store = connect(tmp_path / "q.db")
    store.add_delivery("not-json", "pull_request", "opened", b'{"action": "opened", oops',
                       1.0, 1.0, None)
    store.add_delivery("a-list", "pull_request", "opened", b"[1, 2]", 2.0, 2.0, None)
    called: list[str] = []

    async def handler(d: Delivery, payload: object) -> None:
        called.append(d.id)

    async def scenario() -> None:
        worker = make_worker(store, handler)
        assert await worker.run_once() and await worker.run_once()

    run(scenario)
    assert called == []
    for delivery_id, reason in (("not-json", "JSONDecodeError"), ("a-list", "a JSON list")):
        d = store.get_delivery(delivery_id)
        assert d is not None and d.status == "dead" and d.attempts == 1
        assert "not a JSON object" in (d.last_error or "") and reason in (d.last_error or "")
