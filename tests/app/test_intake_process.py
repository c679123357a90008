"""Intake's writer process (bot/store/intake_process.py) on a real SQLite file and the
real PostgreSQL: a True from `add` is a committed inbox row, a redelivery is a
duplicate, a batch the store refuses fails every request in it and stores none of
them, and a writer SIGKILLed mid-load loses no delivery it confirmed and is replaced
for the next one."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store import NewDelivery, PostgresStore, SqlStore, StoreError, open_store
from bot.store.intake_process import IntakeProcess, decode, encode, intake_target
from tests.app.helpers import payload_bytes

BODY = payload_bytes("pull_request.synchronize")


def push(delivery_id: str, body: bytes = BODY) -> NewDelivery:
    return NewDelivery(delivery_id, "pull_request", "synchronize", body, 100.0, 105.0)


@pytest.fixture
def target(db: str) -> Iterator[str]:
    """The database, migrated by a store of the test's own (as `serve` opens it first)."""
    store = open_store(db)
    store.close()
    yield db


def stored(target: str) -> set[str]:
    store = open_store(target)
    try:
        rows = store.db.execute("SELECT id FROM inbox UNION ALL SELECT id FROM deliveries")
        return {r[0] for r in rows.fetchall()}
    finally:
        store.close()


async def add_all(writer: IntakeProcess, ids: list[str]) -> dict[str, bool | Exception]:
    results = await asyncio.gather(*(writer.add(push(i)) for i in ids), return_exceptions=True)
    out: dict[str, bool | Exception] = {}
    for delivery_id, result in zip(ids, results, strict=True):
        assert isinstance(result, bool | StoreError), result
        out[delivery_id] = result
    return out


def test_frames_decode_whole_and_only_whole_from_any_prefix() -> None:
    frames = [push("a-1"), NewDelivery("p-2", "ping", None, b"", 1.0, 1.0),
              NewDelivery("e-3", "issues", "", b"{}", 2.5, 3.5),
              NewDelivery("u-4", "issues", "\u00e9dit\u00e9", "\u2603".encode(), 4.0, 4.0)]
    parts = [b"".join(encode(d)) for d in frames]
    wire = b"".join(parts)
    assert decode(wire) == (frames, len(wire))
    for cut in range(len(wire) + 1):
        got, used = decode(bytearray(wire[:cut]))
        whole = 0
        while whole < len(parts) and sum(map(len, parts[:whole + 1])) <= cut:
            whole += 1
        assert got == frames[:whole] and used == sum(map(len, parts[:whole]))


def test_confirmed_deliveries_are_committed_and_a_redelivery_is_a_duplicate(
        target: str) -> None:
    ids = [f"w-{i}" for i in range(120)]

    async def scenario() -> tuple[dict[str, bool | Exception], dict[str, bool | Exception]]:
        writer = IntakeProcess(target)
        await writer.start()
        try:
            first = await add_all(writer, ids)
            again = await add_all(writer, [*ids[:10], "w-new"])
        finally:
            await writer.aclose()
        assert writer.rows == len(ids) + 11 and writer.batches >= 2
        return first, again

    first, again = asyncio.run(scenario())
    assert set(first.values()) == {True}
    assert [again[i] for i in ids[:10]] == [False] * 10 and again["w-new"] is True
    assert stored(target) == {*ids, "w-new"}


def _refuse_ids_starting_with_fail(target: str) -> None:
    store = open_store(target)
    try:
        if store.db.postgres:
            store.db.executescript([
                "CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$"
                " BEGIN IF NEW.id LIKE 'fail-' || '%' THEN RAISE EXCEPTION 'refused';"
                " END IF; RETURN NEW; END $$",
                "CREATE TRIGGER test_refuse BEFORE INSERT ON inbox FOR EACH ROW"
                " EXECUTE FUNCTION test_refuse()"])
        else:
            store.db.executescript([
                "CREATE TRIGGER test_refuse BEFORE INSERT ON inbox"
                " WHEN NEW.id LIKE 'fail-' || '%' BEGIN SELECT RAISE(ABORT, 'refused'); END"])
    finally:
        store.close()


def _drop_refusal(target: str) -> None:
    store = open_store(target)
    try:
        store.db.executescript(["DROP TRIGGER test_refuse ON inbox", "DROP FUNCTION test_refuse"]
                               if store.db.postgres else ["DROP TRIGGER test_refuse"])
    finally:
        store.close()


def test_a_refused_batch_fails_every_request_in_it_and_stores_none(target: str) -> None:
    _refuse_ids_starting_with_fail(target)
    try:
        async def scenario() -> tuple[dict[str, bool | Exception], bool]:
            writer = IntakeProcess(target)
            await writer.start()
            try:
                # Sent in one loop iteration: the refused ones share batches with others.
                mixed = await add_all(writer, [f"ok-{i}" if i % 7 else f"fail-{i}"
                                               for i in range(70)])
                after = await writer.add(push("ok-after"))
            finally:
                await writer.aclose()
            return mixed, after

        mixed, after = asyncio.run(scenario())
    finally:
        _drop_refusal(target)
    assert all(isinstance(mixed[i], StoreError) for i in mixed if i.startswith("fail-"))
    confirmed = {i for i, result in mixed.items() if result is True}
    refused = {i for i, result in mixed.items() if isinstance(result, StoreError)}
    assert confirmed | refused == set(mixed) and any(i.startswith("ok-") for i in refused)
    assert after is True  # the writer goes on after a refused batch
    assert stored(target) == confirmed | {"ok-after"}  # nothing refused was kept


def test_a_writer_killed_mid_load_loses_no_confirmed_delivery_and_is_replaced(
        target: str) -> None:
    results: dict[str, bool | Exception] = {}

    async def lane(writer: IntakeProcess, name: str, stop: asyncio.Event) -> None:
        n = 0
        while not stop.is_set():
            delivery_id = f"{name}-{n}"
            try:
                results[delivery_id] = await writer.add(push(delivery_id))
            except StoreError as exc:
                results[delivery_id] = exc
            n += 1

    async def scenario() -> tuple[int, int | None, int | None]:
        writer = IntakeProcess(target)
        await writer.start()
        stop = asyncio.Event()
        lanes = [asyncio.get_running_loop().create_task(lane(writer, f"k{i}", stop))
                 for i in range(8)]
        try:
            while writer.rows < 50:
                await asyncio.sleep(0.001)
            pid = writer.pid
            assert pid is not None
            # Stopped first, so the deliveries sent from now on are certainly unconfirmed
            # when it dies (it may have committed some it had read, unconfirmed too).
            os.kill(pid, signal.SIGSTOP)
            await asyncio.sleep(0.05)
            os.kill(pid, signal.SIGKILL)
            while writer.restarts < 2 or writer.rows < 100:
                await asyncio.sleep(0.001)
            new_pid = writer.pid
        finally:
            stop.set()
            await asyncio.gather(*lanes)
            await writer.aclose()
        return writer.restarts, pid, new_pid

    starts, pid, new_pid = asyncio.run(scenario())
    confirmed = {i for i, result in results.items() if result is True}
    failed = {i for i, result in results.items() if isinstance(result, StoreError)}
    assert starts == 2 and new_pid not in (None, pid)
    assert len(failed) >= 8 and confirmed | failed == set(results)
    kept = stored(target)
    assert confirmed <= kept  # every confirmed delivery is committed
    assert kept <= set(results)


def test_the_writer_opens_the_stores_own_database(store: SqlStore, tmp_path: Path) -> None:
    target = intake_target(store)
    assert target == (store.url if isinstance(store, PostgresStore) else str(tmp_path / "bot.db"))
    assert intake_target(object()) is None
