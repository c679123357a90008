"""`ci-stability serve` killed with SIGKILL mid-review: restarted on SQLite, or taken
over by a second replica on one PostgreSQL database. The review completes once, also
when the kill lands on a write that GitHub applied but did not yet answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.e2e_kit import pr_payload
from tests.app.race_kit import KILL_POINTS, doubled, lost, many_jobs, settled
from tests.app.serve_kit import holder_pid, poll, post, recorded_check, serve
from tests.fakegithub import FakeGitHub, running_fake_github
from tests.github.kit import REPO, new_fake, push, workflow

WF = ".github/workflows/ci.yml"


def assert_published_once(fake: FakeGitHub, head: str) -> None:
    assert len(fake.reviews(REPO, 7)) == 1
    assert len(fake.issue_comments(REPO, 7)) == 1
    runs = fake.check_runs(REPO, head)
    assert len(runs) == 1 and runs[0].status == "completed"  # the same check, finished
    assert fake.violations == []


def test_kill_9_mid_review_then_restart_completes_once(tmp_path: Path) -> None:
    fake: FakeGitHub = new_fake()
    db = str(tmp_path / "app.db")
    # The first attempt hangs on the file list, so the kill lands mid-review.
    fake.inject_delay("GET", r"/pulls/7/files|/compare/", seconds=30, times=1)
    with running_fake_github(fake):
        head = push(fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
        with serve(tmp_path, fake.url, db) as (proc, base):
            assert post(base, pr_payload("opened", 7, head), "crash-1") == 202
            # The in_progress check is created and recorded just before the (hanging)
            # file list: kill once it is recorded, so the kill lands mid-review.
            poll(lambda: recorded_check(db, REPO, 7), "the review to start")
            proc.kill()
            proc.wait()
        assert fake.reviews(REPO, 7) == []  # nothing was published before the kill
        with serve(tmp_path, fake.url, db):
            poll(lambda: any(c.status == "completed" for c in fake.check_runs(REPO, head)),
                 "the review to complete after the restart")
            poll(lambda: len(fake.issue_comments(REPO, 7)) == 1, "the summary comment")
        assert_published_once(fake, head)


def test_two_replicas_on_postgres_one_killed_mid_review_the_other_finishes_once(
    tmp_path: Path, pg_url: str,
) -> None:
    fake: FakeGitHub = new_fake()
    fake.inject_delay("GET", r"/pulls/7/files|/compare/", seconds=30, times=1)
    lease = {"CI_STABILITY_LEASE_SECONDS": "2"}
    with running_fake_github(fake):
        head = push(fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
        with serve(tmp_path, fake.url, pg_url, lease) as (one, base_one), \
                serve(tmp_path, fake.url, pg_url, lease) as (two, base_two):
            # Posted to one replica; the NOTIFY wakes both, and either may claim it.
            assert post(base_one, pr_payload("opened", 7, head), "crash-pg") == 202
            assert post(base_two, pr_payload("opened", 7, head), "crash-pg") == 200  # dedup
            poll(lambda: recorded_check(pg_url, REPO, 7), "the review to start")
            victim_pid = holder_pid(pg_url, "crash-pg")
            victim, survivor = (one, two) if victim_pid == one.pid else (two, one)
            assert victim_pid == victim.pid
            victim.kill()
            victim.wait()
            assert fake.reviews(REPO, 7) == []  # nothing was published before the kill
            # The survivor takes the delivery over once the dead replica's lease runs out.
            poll(lambda: any(c.status == "completed" for c in fake.check_runs(REPO, head)),
                 "the surviving replica to finish the review")
            poll(lambda: len(fake.issue_comments(REPO, 7)) == 1, "the summary comment")
            assert survivor.poll() is None
            assert holder_pid(pg_url, "crash-pg") is None  # done: the lease was cleared
        assert_published_once(fake, head)


JOBS = 60  # 60 findings: annotations in two batches (50 + 10)


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_kill_9_at_each_publication_write_then_restart_publishes_each_thing_once(
    tmp_path: Path, db: str, point: str,
) -> None:
    fake: FakeGitHub = new_fake()
    method, path, skip = KILL_POINTS[point]
    stall = fake.inject_delay(method, path, seconds=60, after=True, skip=skip)
    lease = {"CI_STABILITY_LEASE_SECONDS": "2"}  # PostgreSQL: the dead claim frees soon
    with running_fake_github(fake):
        head = push(fake, 7, {WF: (many_jobs(JOBS, silenced=False),
                                   many_jobs(JOBS, silenced=True))}, tag="h1")
        with serve(tmp_path, fake.url, db, lease) as (proc, base):
            assert post(base, pr_payload("opened", 7, head), f"kill-{point}") == 202
            poll(lambda: stall.hits == 1, f"the {point} write to land")
            proc.kill()
            proc.wait()
        with serve(tmp_path, fake.url, db, lease):
            poll(lambda: settled(db) and not lost(fake, head), "the review after the restart")
    assert doubled(fake) == {} and lost(fake, head) == []
    (run,) = fake.check_runs(REPO, head)
    assert len(run.annotations) == JOBS
    assert len(fake.reviews(REPO, 7)[0].comments) > 0
    assert fake.violations == []
