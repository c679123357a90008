"""Intake's fast path: the fields read from the raw bytes match a full parse, and a body
that only looks like JSON to it is dead-lettered by the worker, never handled."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.store import Delivery
from bot.store.delivery_fields import (
    _top_level_repository,
    delivery_fields,
    scan_prefix,
    scan_pull_request,
)
from tests.app.helpers import live_app, payload_bytes, wait_until

ROOT = Path(__file__).resolve().parents[2]


# --- a body the fast path let through ---------------------------------------------------
def test_a_malformed_body_that_passes_the_quick_check_is_dead_lettered(tmp_path: Path) -> None:
    # Intake reads only the prefix, the head object and the trailing repository object.
    body = (b'{"action": "opened", "number": 5, "pull_request": {"url": "u", "head": '
            b'{"label": "a", "ref": "b", "sha": "' + b"a" * 40 + b'"}, "title": oops}, '
            b'"repository": {"full_name": "o/r"}}')
    called: list[str] = []

    async def handler(d: Delivery, payload: object) -> None:
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


# --- the fast path against a full parse ------------------------------------------------
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
    # What intake asks for: the debounce key only.
    assert scan_pull_request(body, prefix, head=False) == dataclasses.replace(
        fields, head_sha=None)


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
    assert scan_pull_request(body, prefix, head=False) == dataclasses.replace(
        reference(body)[1], head_sha=None)



# --- payloads no retry can make handleable ----------------------------------------------
def _without(name: str, *keys: str) -> bytes:
    data = json.loads(payload_bytes(name))
    for key in keys:
        del data[key]
    return json.dumps(data).encode()


@pytest.mark.parametrize(("event", "body", "reason"), [
    ("pull_request", _without("pull_request.opened", "pull_request"), "no `pull_request`"),
    ("pull_request", _without("pull_request.opened", "repository"), "repository.full_name"),
    ("issue_comment", _without("issue_comment.created", "issue"), "no `issue`"),
])
def test_a_payload_malformed_for_its_event_dead_letters_at_once(
        tmp_path: Path, event: str, body: bytes, reason: str) -> None:
    called: list[str] = []

    async def handler(d: Delivery, payload: object) -> None:
        called.append(d.id)

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", handler, max_attempts=5) as app:
            assert (await app.post(event, body, delivery_id="shapeless")).status == 202
            await wait_until(lambda: app.store.counts()["dead"] == 1)
            dead = app.store.get_delivery("shapeless")
            assert dead is not None and dead.attempts == 1
            assert f"malformed {event} payload" in (dead.last_error or "")
            assert reason in (dead.last_error or "")

    asyncio.run(scenario())
    assert called == []


def test_a_deep_payload_the_fast_path_let_through_dead_letters_with_the_reason(
        tmp_path: Path) -> None:
    # The prefix, head and trailing repository look right; the middle nests 100k deep.
    deep = b"[" * 100_000 + b"]" * 100_000
    body = (b'{"action": "opened", "number": 5, "pull_request": {"head": {"label": "a", '
            b'"ref": "b", "sha": "' + b"a" * 40 + b'"}, "x": ' + deep + b'}, '
            b'"repository": {"full_name": "o/r"}}')

    async def handler(d: Delivery, payload: object) -> None:
        raise AssertionError("never handled")

    async def scenario() -> None:
        async with live_app(tmp_path / "w.db", handler, max_attempts=5) as app:
            assert (await app.post("pull_request", body, delivery_id="deep")).status == 202
            await wait_until(lambda: app.store.counts()["dead"] == 1)
            dead = app.store.get_delivery("deep")
            assert dead is not None and dead.attempts == 1
            assert "nested too deeply" in (dead.last_error or "")

    asyncio.run(scenario())
