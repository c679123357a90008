"""Mutated, correctly signed webhook payloads through a real `ci-stability serve` on the
fake GitHub (tests/app/test_fuzz_payloads.py runs a few hundred; bench/fuzz_payloads.py
runs ten thousand). The tree mutations are those of tests/core/mutants.py; each mutant
is labelled with its kind so outcomes can be counted per kind. Deterministic per seed."""

from __future__ import annotations

import copy
import json
import random
import threading
import urllib.error
import urllib.request
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.store import open_store
from tests.app.e2e_kit import comment_payload, pr_payload
from tests.app.helpers import SECRET, headers, payload
from tests.app.race_kit import doubled, settled
from tests.app.serve_kit import poll, serve
from tests.core.mutants import _ODD_VALUES, _get, _mutate_bytes, _paths, _set
from tests.fakegithub import FakeGitHub, running_fake_github
from tests.github.kit import INSTALLATION, NAME, OWNER, REPO, new_fake, push, workflow

WF = ".github/workflows/ci.yml"
KINDS = ("odd-type", "deep-nesting", "removed-key", "moved-node", "huge-string",
         "non-utf8", "broken-bytes")
BATCH = 200
_DEEP = '"\\u0000deep\\u0000"'  # a placeholder replaced by raw nesting after json.dumps


def _pointed(data: dict[str, Any]) -> dict[str, Any]:
    """A vendored payload pointed at our installation and repository."""
    data["installation"] = {"id": INSTALLATION, "node_id": "MDIz"}
    if isinstance(data.get("repository"), dict):
        data["repository"].update(full_name=REPO, name=NAME)
        data["repository"]["owner"]["login"] = OWNER
    return data


def seeds(head: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, payload) pairs: real payloads that, unmutated, review PR 7 at `head`."""
    found: list[tuple[str, dict[str, Any]]] = [
        ("pull_request", pr_payload(action, 7, head))
        for action in ("opened", "synchronize", "edited", "reopened", "ready_for_review")]
    found.append(("issue_comment", comment_payload(7, "/stability review", "octocat")))
    found.append(("issue_comment", comment_payload(7, "/stability help", "octocat")))
    for name in ("check_run.rerequested", "check_suite.rerequested"):
        data = _pointed(copy.deepcopy(payload(name)))
        member = data[name.split(".")[0]]
        member["head_sha"] = head
        for pull in member.get("pull_requests") or []:
            pull["number"] = 7
        found.append((name.split(".")[0], data))
    for name in ("ping", "installation.created", "pull_request.closed",
                 "workflow_run.completed.with-pull-requests"):
        found.append((name.split(".")[0], _pointed(copy.deepcopy(payload(name)))))
    return found


def _tree(rng: random.Random, kind: str, data: Any) -> Any:
    paths = list(_paths(data))
    path = rng.choice(paths)
    if kind == "odd-type":
        return _set(data, path, copy.deepcopy(rng.choice(_ODD_VALUES)))
    if kind == "deep-nesting":
        return _set(data, path, "\x00deep\x00")
    if kind == "huge-string":
        return _set(data, path, rng.choice(["x", "é", "\u202e", "`"]) * rng.choice(
            [10_000, 300_000, 2_000_000]))
    if kind == "moved-node":
        return _set(data, path, copy.deepcopy(_get(data, rng.choice(paths))))
    parent = _get(data, path[:-1]) if path else None  # removed-key
    if isinstance(parent, dict):
        del parent[path[-1]]
    elif isinstance(parent, list):
        parent.pop(path[-1])
    return data


def mutant(rng: random.Random, data: dict[str, Any]) -> tuple[str, bytes]:
    """(kind, body): one mutant of `data`, of a kind chosen uniformly."""
    kind = rng.choice(KINDS)
    if kind == "broken-bytes":
        return kind, _mutate_bytes(rng, json.dumps(data).encode())
    tree: Any = copy.deepcopy(data)
    for _ in range(rng.randint(1, 3)):
        tree = _tree(rng, "odd-type" if kind == "non-utf8" else kind, tree)
    body = json.dumps(tree, ensure_ascii=kind != "huge-string").encode()
    depth = rng.choice([10, 1000, 100_000])
    body = body.replace(_DEEP.encode(), b"[" * depth + b"]" * depth)
    if kind == "non-utf8":  # raw bytes that are not UTF-8, inside a string or anywhere
        at = rng.choice([i for i, byte in enumerate(body) if byte == ord('"')] or [0])
        body = body[:at + 1] + rng.choice([b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x80"]) \
            + body[at + 1:]
    return kind, body


@dataclass
class Report:
    posted: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)  # kind → http/final
    final: Counter[str] = field(default_factory=Counter)
    retried: int = 0
    dead_reasons: Counter[str] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)  # 5xx or no answer
    unstored: list[str] = field(default_factory=list)  # 202 but not in the store
    unsettled: list[str] = field(default_factory=list)  # not final within the bound
    tracebacks: list[str] = field(default_factory=list)
    liveness_failures: int = 0
    liveness_probes: int = 0
    doubled: dict[str, int] = field(default_factory=dict)

    def broken(self) -> list[str]:
        """Everything that must be empty: what the fuzz found wrong."""
        return [*self.server_errors, *self.unstored, *self.unsettled, *self.tracebacks,
                *(["liveness"] * self.liveness_failures),
                *(f"doubled {k}: {v}" for k, v in self.doubled.items())]


def _post(base: str, event: str, body: bytes, delivery: str) -> str:
    """The answer: "202 queued", "202 ignored" (an event or action we do not handle), "400"…"""
    request = urllib.request.Request(f"{base}/webhook", data=body, method="POST",
                                     headers=headers(event, body, SECRET, delivery))
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read() or b"{}")
            return f"{response.status} {answer.get('status', '')}".strip()
    except urllib.error.HTTPError as exc:
        return str(exc.code)


def _probe(base: str, stop: threading.Event, report: Report) -> None:
    while not stop.wait(0.25):
        report.liveness_probes += 1
        try:
            with urllib.request.urlopen(f"{base}/healthz/live", timeout=30) as response:
                ok = response.status == 200
        except (urllib.error.URLError, OSError):
            ok = False
        report.liveness_failures += not ok


def _tally_store(db: str, sent: dict[str, str], report: Report) -> None:
    store = open_store(db)
    try:
        rows = {str(r[0]): (str(r[1]), int(r[2]), r[3]) for r in store.db.execute(
            "SELECT id, status, attempts, last_error FROM deliveries").fetchall()}
    finally:
        store.close()
    for delivery, kind in sent.items():
        if delivery not in rows:
            continue
        status, attempts, error = rows[delivery]
        report.final[status] += 1
        report.by_kind[kind][status] += 1
        report.retried += attempts > 1
        if status == "dead":
            report.dead_reasons[str(error or "no reason")[:70]] += 1
        if status == "dead" and not error:
            report.tracebacks.append(f"{delivery} ({kind}): dead without a reason")


def _scan_log(log_dir: Path, report: Report) -> None:
    for log in log_dir.glob("serve-*.log"):
        for line in log.read_text(errors="replace").splitlines():
            if "Traceback" in line or '"exc"' in line:
                report.tracebacks.append(line[:400])


def fuzz(work: Path, count: int, seed: int, bound_s: float = 600.0,
         concurrency: int = 8) -> Report:
    """`count` signed mutants POSTed to one `serve`; every outcome tallied in a Report."""
    rng = random.Random(seed)
    fake: FakeGitHub = new_fake()
    db = str(work / "app.db")
    report = Report(by_kind={kind: Counter() for kind in KINDS})
    env = {"CI_STABILITY_MAX_ATTEMPTS": "3", "CI_STABILITY_BOT_LOGIN": "ci-stability-bot[bot]"}
    with running_fake_github(fake):
        head = push(fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
        cases = seeds(head)
        sent: dict[str, str] = {}
        with serve(work, fake.url, db, env) as (proc, base):
            stop = threading.Event()
            prober = threading.Thread(target=_probe, args=(base, stop, report), daemon=True)
            prober.start()
            try:
                # In batches: ten thousand bodies of up to a few MB each never sit in memory.
                with ThreadPoolExecutor(concurrency) as pool:
                    for start in range(0, count, BATCH):
                        jobs = [_job(rng, cases, seed, i)
                                for i in range(start, min(count, start + BATCH))]
                        codes = list(pool.map(lambda j: _answer(base, j), jobs))
                        _tally_http(jobs, codes, report, sent)
                try:
                    poll(lambda: settled(db), "every delivery to reach a final state", bound_s)
                except AssertionError as exc:
                    report.unsettled.append(str(exc))
            finally:
                stop.set()
                prober.join()
            if proc.poll() is not None:
                report.server_errors.append(f"serve exited with {proc.returncode}")
        _tally_store(db, sent, report)
        stored = _stored_ids(db)
        report.unstored.extend(f"{d}: acknowledged but not stored"
                               for d in sent if d not in stored)
        report.doubled = doubled(fake)
    _scan_log(work, report)
    return report


def _job(rng: random.Random, cases: list[tuple[str, dict[str, Any]]], seed: int,
         i: int) -> tuple[str, str, str, bytes]:
    event, data = rng.choice(cases)
    kind, body = mutant(rng, data)
    return f"fuzz-{seed}-{i}-{uuid.UUID(int=rng.getrandbits(128))}", event, kind, body


def _tally_http(jobs: list[tuple[str, str, str, bytes]], codes: list[str], report: Report,
                sent: dict[str, str]) -> None:
    for (delivery, _event, kind, _body), code in zip(jobs, codes, strict=True):
        report.posted += 1
        report.by_status[code] += 1
        report.by_kind[kind][f"http {code}"] += 1
        if code.startswith("5") or code == "no answer":
            report.server_errors.append(f"{delivery} ({kind}): HTTP {code}")
        if code == "202 queued":
            sent[delivery] = kind


def _answer(base: str, job: tuple[str, str, str, bytes]) -> str:
    delivery, event, _kind, body = job
    try:
        return _post(base, event, body, delivery)
    except (urllib.error.URLError, OSError):
        return "no answer"


def _stored_ids(db: str) -> set[str]:
    store = open_store(db)
    try:
        return {str(r[0]) for r in store.db.execute("SELECT id FROM deliveries").fetchall()}
    finally:
        store.close()
