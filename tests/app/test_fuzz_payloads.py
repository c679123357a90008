"""Mutated, correctly signed webhook payloads through a real `serve` on the fake GitHub:
no 5xx, every 202 stored, every delivery done or dead-lettered with a reason, no
traceback in the log, /healthz/live answering throughout, nothing published twice
(the full count runs in bench/fuzz_payloads.py)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.app.payload_shape import parsed_payload
from bot.store import Delivery
from tests.app.payload_mutants import KINDS, _post, fuzz, mutant, seeds
from tests.app.serve_kit import serve
from tests.fakegithub import running_fake_github
from tests.github.kit import new_fake


def test_signed_mutants_are_refused_or_dead_lettered_never_crash(tmp_path: Path) -> None:
    report = fuzz(tmp_path, 240, seed=9, bound_s=300)
    assert report.broken() == []
    assert report.posted == 240 and report.liveness_probes > 0
    # Hostile enough to be dead-lettered, and harmless ones review. (Intake reads only
    # `action` and `number`, so a mutant that keeps GitHub's first bytes is queued and
    # the worker dead-letters it; 400s come only from bodies that also fail that scan.)
    assert report.final["dead"] > 0
    assert report.final["done"] > 20
    assert sum(report.final.values()) == report.by_status["202 queued"]
    assert all(report.by_kind[kind].total() > 0 for kind in KINDS)


def test_mutants_are_deterministic_per_seed() -> None:
    cases = seeds("a" * 40)
    one = [mutant(random.Random(3), data) for _event, data in cases]
    two = [mutant(random.Random(3), data) for _event, data in cases]
    assert one == two


def _delivery(event: str, data: Mapping[str, Any]) -> Delivery:
    return Delivery(id="d", event=event, action=None, payload=json.dumps(data).encode(),
                    received_at=0.0, not_before=0.0, group_key=None, status="running",
                    attempts=1, last_error=None)


def test_wrong_json_types_the_handlers_read_are_dead_letter_reasons() -> None:
    # Each once crashed a handler (found by the fuzz): .get on an int, a dict bound in SQL.
    comment = dict(seeds("a" * 40))["issue_comment"]
    hostile = json.loads(json.dumps(comment))
    hostile["comment"]["user"] = 3
    _, problem = parsed_payload(_delivery("issue_comment", hostile))
    assert problem == ("malformed issue_comment payload: `comment.user` is an integer, "
                       "not an object")
    hostile["comment"] = "a string"
    _, problem = parsed_payload(_delivery("issue_comment", hostile))
    assert problem == "malformed issue_comment payload: `comment` is a string, not an object"
    run = {"action": "completed", "repository": {"full_name": "o/r"},
           "workflow_run": {"id": 5, "path": {"a": 1}}}
    _, problem = parsed_payload(_delivery("workflow_run", run))
    assert problem is not None and "`workflow_run.path` is an object" in problem
    suite = {"action": "rerequested", "repository": {"full_name": "o/r"},
             "check_suite": {"pull_requests": [{"number": True}]}}
    _, problem = parsed_payload(_delivery("check_suite", suite))
    assert problem is not None and "`check_suite.pull_requests.0.number` is a boolean" in problem
    del suite["check_suite"]["pull_requests"][0]["number"]  # a KeyError, once
    _, problem = parsed_payload(_delivery("check_suite", suite))
    assert problem == "malformed check_suite payload: no `check_suite.pull_requests.0.number`"
    assert parsed_payload(_delivery("issue_comment", comment)) == (comment, None)
    numbered = json.loads(json.dumps(comment))
    numbered["issue"]["number"] = -1  # once recorded a failed review for PR -1
    _, problem = parsed_payload(_delivery("issue_comment", numbered))
    assert problem == "malformed issue_comment payload: `issue.number` is not a positive integer"


def test_a_lone_surrogate_in_action_is_refused_not_a_503(tmp_path: Path) -> None:
    # Found by the fuzz: `"\ud800created"` parses, then the store could not encode it.
    fake = new_fake()
    body = json.dumps({"action": "\ud800created", "installation": {"id": 1}}).encode()
    with running_fake_github(fake), serve(tmp_path, fake.url) as (_proc, base):
        assert _post(base, "installation", body, "surrogate-1") == "400"
        assert _post(base, "installation", body.replace(b"\\ud800", b""), "ok-1") \
            == "202 queued"
