"""Two real `serve` replicas on one database (SQLite file, then PostgreSQL); the one
reviewing a PR is stopped (SIGSTOP: an event loop stalled by the kernel, as a long GC
pause or a swapped-out process would be) while it waits on GitHub, for longer than its
lease. The other takes the delivery over and publishes the review; the stalled one,
resumed, must publish nothing: one check run, one review, one summary on the fake."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

from tests.app.e2e_kit import pr_payload
from tests.app.race_kit import doubled, lost, settled
from tests.app.serve_kit import holder_pid, poll, post, serve
from tests.fakegithub import running_fake_github
from tests.github.kit import new_fake, push, workflow

WF = ".github/workflows/ci.yml"
ENV = {"CI_STABILITY_LEASE_SECONDS": "1", "CI_STABILITY_MAX_ATTEMPTS": "20"}


# What a worker logs as it lets a delivery go (bot/app/queue.py), whatever the outcome.
LET_GO = {"delivery handled", "delivery failed; will retry", "delivery given up: lease lost",
          "delivery moved to the dead-letter state"}


def _let_go(tmp_path: Path, pid: int, delivery_id: str) -> bool:
    """Whether the replica with this pid logged that it let the delivery go."""
    for log in tmp_path.glob("serve-*.log"):
        entries = [json.loads(line) for line in log.read_text().splitlines() if line]
        if any(e.get("msg") == "listening" and f":{pid}:" in str(e.get("replica"))
               for e in entries):
            return any(e.get("msg") in LET_GO and e.get("delivery_id") == delivery_id
                       for e in entries)
    return False


def test_a_replica_stalled_past_its_lease_mid_review_publishes_nothing_after(
    tmp_path: Path, db: str,
) -> None:
    fake = new_fake()
    # The stalled replica's read of the PR's comments (what it already published) is
    # answered while it is stopped, before the other replica published anything.
    held = fake.inject_delay("GET", r"/issues/7/comments", seconds=1.5, times=1)
    with running_fake_github(fake):
        head = push(fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
        with serve(tmp_path, fake.url, db, ENV) as (one, base), \
                serve(tmp_path, fake.url, db, ENV) as (two, _):
            assert post(base, pr_payload("opened", 7, head), "stall-1") == 202
            poll(lambda: held.hits == 1, "a replica to read the PR's comments")
            pid = holder_pid(db, "stall-1")
            stalled = two if pid == two.pid else one
            os.kill(stalled.pid, signal.SIGSTOP)
            try:  # bounded: a replica stopped inside a SQLite write would block the other
                with contextlib.suppress(AssertionError):
                    poll(lambda: lost(fake, head) == [], "the other replica's review", 30)
            finally:
                os.kill(stalled.pid, signal.SIGCONT)
            poll(lambda: settled(db) and lost(fake, head) == [], "the review")
            poll(lambda: _let_go(tmp_path, stalled.pid, "stall-1"),
                 "the resumed replica to let the delivery go")
            assert settled(db)
        assert doubled(fake) == {} and lost(fake, head) == []
        assert fake.violations == []
