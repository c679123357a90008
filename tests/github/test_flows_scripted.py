"""Flows unit-tested against canned answers: the exact calls, in order, and the
decisions made on each answer (no server, no driver)."""

from __future__ import annotations

import pytest

from bot.github.calls import GitHubError, paginate
from bot.github.publish import start_check
from bot.github.pull import get_pull
from bot.github.recovery import known_state
from bot.render import markers
from tests.github.scripted import ScriptedDriver, Step, answer

BASE = "/repos/o/r"
BOT = "ci-stability-bot[bot]"


def test_paginate_follows_next_links_and_stops_at_the_last_page() -> None:
    nxt = "https://api.github.com/repositories/1/pulls/7/files?page=2"
    driver = ScriptedDriver([
        Step("GET", f"{BASE}/pulls/7/files", answer(200, [{"n": 1}], link=f'<{nxt}>; rel="next"'),
             params={"per_page": 100}),
        Step("GET", nxt, answer(200, [{"n": 2}])),
    ])
    items = driver.run(paginate(f"{BASE}/pulls/7/files", "pulls/list-files"))
    assert items == [{"n": 1}, {"n": 2}]


def test_an_error_status_is_a_github_error_naming_the_operation() -> None:
    driver = ScriptedDriver([Step("GET", f"{BASE}/pulls/7", answer(404, {"message": "Not Found"}))])
    with pytest.raises(GitHubError) as raised:
        driver.run(get_pull("o", "r", 7))
    assert raised.value.status == 404


def test_known_state_recovers_what_the_bot_published_from_its_markers() -> None:
    hidden = markers.state({"version": 1, "head_sha": "abc"})
    summary = "\n".join([markers.SUMMARY, "table", hidden])
    review = f"{markers.REVIEW}\n{markers.fingerprint('abcdef12')}"
    driver = ScriptedDriver([
        Step("GET", f"{BASE}/issues/7/comments", answer(200, [
            {"id": 1, "user": {"login": "someone"}, "body": summary},  # not ours: ignored
            {"id": 2, "user": {"login": BOT}, "body": summary},
        ])),
        Step("GET", f"{BASE}/pulls/7/reviews", answer(200, [
            {"id": 9, "user": {"login": BOT}, "body": review, "commit_id": "abc"},
        ])),
    ])
    state = driver.run(known_state("o", "r", 7, BOT, None))
    assert state.summary_id == 2 and state.head_sha == "abc"
    assert state.posted == ["abcdef12"] and state.review_shas == ["abc"]


def test_known_state_makes_no_call_when_the_history_is_known() -> None:
    driver = ScriptedDriver([])
    state = driver.run(known_state("o", "r", 7, BOT, {"version": 1, "history_known": True}))
    assert state.history_known and driver.calls == []


def test_start_check_creates_one_in_progress_run_and_reuses_it_for_the_same_head() -> None:
    driver = ScriptedDriver([Step("POST", f"{BASE}/check-runs", answer(201, {"id": 55}))])
    state = driver.run(start_check("o", "r", "abc", None))
    assert state["check"]["id"] == 55 and state["check"]["status"] == "in_progress"
    assert driver.calls[0].body["status"] == "in_progress"
    again = ScriptedDriver([])
    assert again.run(start_check("o", "r", "abc", state)) == state
