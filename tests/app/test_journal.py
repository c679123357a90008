"""The intake journal: durable appends, replay after kill -9, torn tails, the fast path."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.delivery_fields import (
    _top_level_repository,
    delivery_fields,
    scan_prefix,
    scan_pull_request,
)
from bot.metrics import Metrics
from bot.store import Delivery, IntakeJournal, NewDelivery, StoreError, connect
from bot.store.journal import HEADER_SIZE, journal_dir, read_segment, segments
from bot.store.journal_intake import DrainPolicy
from bot.web import build_web_app
from tests.app.helpers import headers, live_app, payload_bytes, wait_until

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
NEVER = DrainPolicy(interval=3600.0, max_delay=3600.0)  # only queue reads drain
BODY = payload_bytes("pull_request.synchronize")


def new(delivery_id: str, payload: bytes = BODY, at: float = 100.0) -> NewDelivery:
    return NewDelivery(delivery_id, "pull_request", "synchronize", payload, at, at + 5.0,
                       "Codertocat/Hello-World#2")


def rows(db: Path) -> dict[str, bytes]:
    """The deliveries table as another process sees it (no journal involved)."""
    with sqlite3.connect(db) as conn:
        return {r[0]: r[1] for r in conn.execute("SELECT id, payload FROM deliveries")}


def abandoned_journal(db: Path, *ids: str) -> Path:
    """Records appended by an owner that then went away without draining them."""
    connect(db).close()
    directory = journal_dir(str(db))
    assert directory is not None
    journal = IntakeJournal.open(directory, lambda batch: [True] * len(batch))
    for delivery_id in ids:
        journal.append(new(delivery_id, payload=BODY + delivery_id.encode()))
    journal.close()
    (segment,) = segments(directory)
    return segment


# --- the journal on its own ------------------------------------------------------------
def test_appended_records_move_into_the_table_and_the_segment_goes(tmp_path: Path) -> None:
    store = connect(tmp_path / "j.db")
    journal = store.open_journal()
    assert journal is not None
    for i in range(3):
        journal.append(new(f"d{i}", at=100.0 + i))
    assert journal.backlog == 3 and rows(tmp_path / "j.db") == {}
    report = store.drain_journal()
    assert (report.moved, report.duplicates, journal.backlog) == (3, 0, 0)
    assert segments(journal.directory) == []
    d = store.get_delivery("d1")
    assert d is not None and d.payload == BODY and d.status == "pending"
    assert (d.received_at, d.not_before, d.group_key) == (101.0, 106.0, "Codertocat/Hello-World#2")
    store.close()


def test_segments_rotate_and_drain_from_memory_or_from_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import bot.store.journal as journal_module

    # Small limits so a handful of records spans several segments, some kept in
    # memory and the rest read back from disk when drained.
    monkeypatch.setattr(journal_module, "SEGMENT_BYTES", 3 * len(BODY))
    monkeypatch.setattr(journal_module, "KEEP_BYTES", 4 * len(BODY))
    store = connect(tmp_path / "j.db")
    journal = store.open_journal()
    assert journal is not None
    for i in range(8):
        journal.append(new(f"r{i}", payload=BODY + str(i).encode(), at=100.0 + i))
    assert len(segments(journal.directory)) == 3
    assert store.drain_journal(max_rows=5).moved == 5
    assert journal.backlog == 3
    assert store.drain_journal().moved == 3
    assert segments(journal.directory) == [] and journal.backlog == 0
    assert set(rows(tmp_path / "j.db")) == {f"r{i}" for i in range(8)}
    for i in range(8):
        d = store.get_delivery(f"r{i}")
        assert d is not None and d.payload == BODY + str(i).encode()
    store.close()


def test_queue_reads_see_a_journaled_delivery_at_once(tmp_path: Path) -> None:
    store = connect(tmp_path / "j.db")
    journal = store.open_journal()
    assert journal is not None
    journal.append(new("seen"))
    assert store.get_delivery("seen") is not None
    journal.append(new("counted"))
    assert store.counts()["pending"] == 2
    journal.append(new("claimed", at=1.0))
    claimed = store.claim(now=1e9)
    assert claimed is not None and claimed.id == "claimed"
    store.close()


def test_a_record_already_in_the_table_is_not_queued_twice(tmp_path: Path) -> None:
    store = connect(tmp_path / "j.db")
    store.add_deliveries([new("again")])
    journal = store.open_journal()
    assert journal is not None
    journal.append(new("again"))
    assert store.drain_journal().duplicates == 1
    assert store.counts()["pending"] == 1
    store.close()


def test_a_second_owner_is_refused_clearly(tmp_path: Path) -> None:
    first, second = connect(tmp_path / "j.db"), connect(tmp_path / "j.db")
    assert first.open_journal() is not None
    with pytest.raises(StoreError, match="in use by another process"):
        second.open_journal()
    with pytest.raises(StoreError, match="in use by another process"):
        build_web_app("secret", second, None, Metrics())
    first.close()
    assert second.open_journal() is not None  # the lock went with its owner
    second.close()


def test_a_closed_journal_refuses_appends(tmp_path: Path) -> None:
    store = connect(tmp_path / "j.db")
    journal = store.open_journal()
    assert journal is not None
    store.close()
    with pytest.raises(OSError, match="closed"):
        journal.append(new("late"))


def test_opening_the_database_replays_an_abandoned_journal(tmp_path: Path) -> None:
    segment = abandoned_journal(tmp_path / "j.db", "a", "b")
    assert rows(tmp_path / "j.db") == {}
    store = connect(tmp_path / "j.db")
    assert {d.id for d in (store.get_delivery("a"), store.get_delivery("b")) if d} == {"a", "b"}
    assert not segment.exists()
    store.close()


def test_a_live_owners_journal_is_left_alone_by_other_connections(tmp_path: Path) -> None:
    owner = connect(tmp_path / "j.db")
    journal = owner.open_journal()
    assert journal is not None
    journal.append(new("in-flight"))
    reader = connect(tmp_path / "j.db")  # e.g. the CLI while `serve` runs
    assert reader.get_delivery("in-flight") is None
    assert len(read_segment(segments(journal.directory)[0])[0]) == 1
    reader.close()
    owner.close()  # drains at close
    assert set(rows(tmp_path / "j.db")) == {"in-flight"}


@pytest.mark.parametrize("keep_of_last", [1, HEADER_SIZE - 1, HEADER_SIZE, HEADER_SIZE + 9,
                                          HEADER_SIZE + 200, "all-but-1"])
def test_a_torn_last_record_is_dropped_and_the_rest_replayed(
    tmp_path: Path, keep_of_last: int | str, caplog: pytest.LogCaptureFixture,
) -> None:
    segment = abandoned_journal(tmp_path / "j.db", "a", "b", "c")
    records, ending = read_segment(segment)
    assert [r.delivery_id for r in records] == ["a", "b", "c"] and ending == "clean"
    size = segment.stat().st_size
    last = size // 3  # the three records have the same size
    keep = last - 1 if keep_of_last == "all-but-1" else int(keep_of_last)
    with open(segment, "r+b") as f:  # what a write cut short by kill -9 leaves behind
        f.truncate(size - last + keep)
    with caplog.at_level(logging.WARNING, logger="bot.store.journal"):
        store = connect(tmp_path / "j.db")
    assert set(rows(tmp_path / "j.db")) == {"a", "b"}
    assert store.get_delivery("b").payload == BODY + b"b"  # type: ignore[union-attr]
    assert not segment.exists() and not list(segment.parent.glob("*.corrupt"))
    assert "cut short" in caplog.text
    store.close()


def test_damaged_bytes_are_moved_aside_never_replayed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    segment = abandoned_journal(tmp_path / "j.db", "a", "b", "c")
    size = segment.stat().st_size
    with open(segment, "r+b") as f:  # one flipped byte in the second record's body
        f.seek(size // 3 + size // 6)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    with caplog.at_level(logging.ERROR, logger="bot.store.journal"):
        store = connect(tmp_path / "j.db")
    assert set(rows(tmp_path / "j.db")) == {"a"}
    assert [p.name for p in segment.parent.glob("*.corrupt")] == [segment.name + ".corrupt"]
    assert "fail their checksum" in caplog.text
    store.close()


# --- kill -9 between the 202 and the drain, for real -------------------------------------------
@contextmanager
def intake_process(db: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    log = db.with_suffix(f".{time.monotonic_ns()}.log")
    code = "import sys; from tests.app.helpers import serve_intake_forever as s; s(sys.argv[1])"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", code, str(db)], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + TIMEOUT
        while '"listening"' not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.02)
        port = next(json.loads(line)["port"] for line in log.read_text().splitlines()
                    if '"listening"' in line)
        yield proc, f"http://127.0.0.1:{port}"
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


def test_deliveries_acknowledged_then_killed_before_the_drain_are_replayed_once(
    tmp_path: Path,
) -> None:
    db = tmp_path / "app.db"
    opened = payload_bytes("pull_request.opened")
    ids = ["k-1", "k-2", "k-3"]
    with intake_process(db) as (proc, base):
        assert [post(base, "pull_request", opened, i) for i in ids] == [202, 202, 202]
        assert post(base, "pull_request", opened, "k-2") == 200  # still only in the journal
        assert rows(db) == {}  # acknowledged, not yet in SQLite: only the journal has them
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    handled: list[str] = []

    async def handler(d: Delivery) -> None:
        handled.append(d.id)

    async def scenario() -> None:
        async with live_app(db, handler) as app:  # a restart: replay, then the workers
            await wait_until(lambda: app.store.counts()["done"] == 3)
            assert (await app.post("pull_request", opened, delivery_id="k-1")).status == 200
            stored = app.store.get_delivery("k-3")
            assert stored is not None and stored.payload == opened

    asyncio.run(scenario())
    assert sorted(handled) == ids
    directory = journal_dir(str(db))
    assert directory is not None and segments(directory) == []


# --- intake through the journal -----------------------------------------------------------------
def test_a_redelivery_still_in_the_journal_is_a_duplicate(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", drain_policy=NEVER) as app:
            first = await app.post("pull_request", BODY, delivery_id="twice")
            second = await app.post("pull_request", BODY, delivery_id="twice")
            assert (first.status, second.status) == (202, 200)
            assert rows(tmp_path / "w.db") == {}
            assert app.store.counts()["pending"] == 1

    asyncio.run(scenario())


def test_the_drain_runs_on_its_own_when_intake_is_quiet(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_app(tmp_path / "w.db") as app:
            for i in range(5):
                assert (await app.post("pull_request", BODY, delivery_id=f"q{i}")).status == 202
            await wait_until(lambda: len(rows(tmp_path / "w.db")) == 5)

    asyncio.run(scenario())


def test_a_malformed_body_that_passes_the_quick_check_is_dead_lettered(tmp_path: Path) -> None:
    # Intake reads only the prefix, the head object and the trailing repository object.
    body = (b'{"action": "opened", "number": 5, "pull_request": {"url": "u", "head": '
            b'{"label": "a", "ref": "b", "sha": "' + b"a" * 40 + b'"}, "title": oops}, '
            b'"repository": {"full_name": "o/r"}}')
    called: list[str] = []

    async def handler(d: Delivery) -> None:
        called.append(d.id)

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", handler) as app:
            assert (await app.post("pull_request", body, delivery_id="bad-json")).status == 202
            await wait_until(lambda: app.store.counts()["dead"] == 1)
            dead = app.store.get_delivery("bad-json")
            assert dead is not None and dead.attempts == 1
            assert "not a JSON object" in (dead.last_error or "")

    asyncio.run(scenario())
    assert called == []


def test_group_commit_remains_for_a_store_without_a_journal(tmp_path: Path) -> None:
    from bot.store import GroupCommitter

    async def scenario() -> None:
        store = connect(tmp_path / "g.db")
        async with live_app(tmp_path / "w.db", committer=GroupCommitter(store)) as app:
            assert (await app.post("pull_request", BODY, delivery_id="gc")).status == 202
            assert set(rows(tmp_path / "g.db")) == {"gc"}  # committed before the 202
        store.close()

    asyncio.run(scenario())


# --- the fast path against a full parse -----------------------------------------------------------
def reference(body: bytes) -> tuple[str | None, Any]:
    payload = json.loads(body)
    action = payload.get("action") if isinstance(payload.get("action"), str) else None
    return action, delivery_fields(payload)


DECOYS = ['"repository": {"full_name": "evil/x"}', '"action": "closed", ', '"number": 99,',
          '"head": {"label": "l", "ref": "r", "sha": "' + "b" * 40 + '"}', "\\", '\\"', "}{"]
texts = st.one_of(st.text(max_size=40), st.sampled_from(DECOYS),
                  st.tuples(st.text(max_size=10), st.sampled_from(DECOYS)).map("".join))
names = st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def github_pull_request(draw: st.DrawFn) -> dict[str, Any]:
    owner, name, number = draw(names), draw(names), draw(st.integers(0, 10**6))
    extra = draw(st.dictionaries(names.map("x_".__add__), json_values, max_size=3))
    return {
        "action": draw(st.sampled_from(["opened", "synchronize", "closed", "edited"])),
        "number": number,
        "pull_request": {
            "url": f"https://api.github.com/repos/{owner}/{name}/pulls/{number}",
            "title": draw(texts), "body": draw(st.none() | texts),
            "user": {"login": draw(texts)}, "labels": [{"name": draw(texts)}],
            "head": {"label": draw(texts), "ref": draw(texts),
                     "sha": draw(st.from_regex(r"[0-9a-f]{40}", fullmatch=True))},
            "base": {"label": draw(texts), "ref": draw(texts), "sha": "c" * 40},
        },
        **extra,
        "repository": {"full_name": f"{owner}/{name}", "description": draw(texts)},
        "sender": {"login": draw(texts)},
    }


def serialise(payload: Any, style: int) -> bytes:
    if style == 0:
        return orjson.dumps(payload)
    if style == 1:
        return json.dumps(payload, indent=2).encode()  # as GitHub's examples look
    return json.dumps(payload, ensure_ascii=False, separators=(", ", ": ")).encode()


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(payload=github_pull_request(), style=st.integers(0, 2))
def test_the_fast_path_finds_what_a_full_parse_finds(payload: dict[str, Any], style: int) -> None:
    body = serialise(payload, style)
    action, fields = reference(body)
    prefix = scan_prefix(body)
    assert prefix is not None and (prefix.action, prefix.number) == (action, fields.number)
    assert scan_pull_request(body, prefix) == fields


KEYS = st.sampled_from(["pull_request", "repository", "head", "number", "x"]) | texts
SHAS = st.from_regex(r"[0-9a-f]{40}", fullmatch=True)
heads = st.builds(lambda label, ref, sha: {"label": label, "ref": ref, "sha": sha},
                  texts, texts, SHAS)
repositories = st.builds(lambda name: {"full_name": name}, texts | names)
nested = st.recursive(
    json_values | repositories | heads,
    lambda inner: st.dictionaries(KEYS, inner, max_size=3) | st.lists(inner, max_size=2),
    max_leaves=10,
)


@st.composite
def json_object_led_by_action(draw: st.DrawFn) -> dict[str, Any]:
    """Objects GitHub would not send, except that `action` leads (else the fast path
    gives up at once): top-level and nested "repository" and "head" objects in any
    order, at any depth."""
    payload: dict[str, Any] = {"action": draw(st.sampled_from(["opened", "synchronize"]))}
    if draw(st.booleans()):
        payload["number"] = draw(st.integers(-5, 10**6) | st.booleans() | st.floats(0, 9))
    rest: dict[str, Any] = draw(st.dictionaries(texts, nested, max_size=3))
    if draw(st.booleans()):
        rest["repository"] = draw(repositories | nested)
    if draw(st.booleans()):
        rest["pull_request"] = {"head": draw(heads), "more": draw(nested)}
    order = draw(st.permutations(list(rest)))
    payload.update((key, rest[key]) for key in order if key not in payload)
    return payload


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(payload=json_object_led_by_action(), style=st.integers(0, 2))
def test_on_any_json_object_the_fast_path_is_right_or_silent(payload: dict[str, Any],
                                                             style: int) -> None:
    body = serialise(payload, style)
    action, fields = reference(body)
    prefix = scan_prefix(body)
    assert prefix is not None and prefix.action == action
    assert prefix.number is None or prefix.number == fields.number
    repo = _top_level_repository(body)  # the part the debounce key depends on
    assert repo is None or repo == fields.repo
    found = scan_pull_request(body, prefix)
    if found is not None:  # head_sha only feeds the log line: not compared here
        assert (found.repo, found.number) == (fields.repo, fields.number)


@given(st.binary(max_size=300) | st.sampled_from([b"", b"{", b'{"action": "x"', b"\xff\xfe"]))
def test_the_fast_path_never_raises_on_garbage(body: bytes) -> None:
    prefix = scan_prefix(body)
    if prefix is not None:
        scan_pull_request(body, prefix)


@pytest.mark.parametrize("name", [p.stem for p in sorted(
    (ROOT / "tests/data/github/webhooks").glob("pull_request.*.json"))])
def test_the_fast_path_covers_every_vendored_pull_request_payload(name: str) -> None:
    body = payload_bytes(name)
    prefix = scan_prefix(body)
    assert prefix is not None
    assert scan_pull_request(body, prefix) == reference(body)[1]

