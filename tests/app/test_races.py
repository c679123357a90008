"""Two deliveries for one PR, back to back, on a real `serve` (two workers, the
default settings, debounce included) over SQLite and PostgreSQL: exactly one check
run per head, one review per head, one summary comment."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tests.app.e2e_kit import comment_payload, pr_payload
from tests.app.race_kit import dead_letters, doubled, lost, settled, summaries
from tests.app.serve_kit import poll, post, serve
from tests.fakegithub import FakeGitHub, running_fake_github
from tests.github.kit import REPO, new_fake, push, workflow

WF = ".github/workflows/ci.yml"
# The defaults serve_kit turns off for speed: here they stay as shipped.
DEFAULTS = {"CI_STABILITY_DEBOUNCE_SECONDS": "5", "CI_STABILITY_WRITE_SPACING": "1"}


def _seed(fake: FakeGitHub) -> str:
    fake.set_permission(REPO, "dev", "write")
    return push(fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")


def _edited(head: str) -> dict[str, object]:
    data = pr_payload("edited", 7, head, changes={"title": {"from": "Old title"}})
    return data


def _run(tmp_path: Path, db: str, deliver: Callable[[FakeGitHub, str, str], list[str]]
         ) -> tuple[FakeGitHub, list[str]]:
    fake = new_fake()
    with running_fake_github(fake):
        head = _seed(fake)
        with serve(tmp_path, fake.url, db, DEFAULTS) as (_, base):
            heads = deliver(fake, base, head)
            poll(lambda: settled(db) and bool(fake.check_runs(REPO, heads[-1]))
                 and fake.check_runs(REPO, heads[-1])[-1].status == "completed",
                 "both deliveries to be handled")
        assert dead_letters(db) == 0
    return fake, heads


def test_opened_and_edited_together_publish_once(tmp_path: Path, db: str) -> None:
    def deliver(fake: FakeGitHub, base: str, head: str) -> list[str]:
        fake.state.pulls[(REPO, 7)].title = "New title"
        assert post(base, pr_payload("opened", 7, head), "race-open") == 202
        assert post(base, _edited(head), "race-edit") == 202
        return [head]

    fake, (head,) = _run(tmp_path, db, deliver)
    assert doubled(fake) == {} and lost(fake, head) == []
    assert len(fake.check_runs(REPO, head)) == 1 and len(summaries(fake)) == 1
    assert fake.violations == []


def test_opened_and_a_review_command_together_publish_once(tmp_path: Path, db: str) -> None:
    def deliver(fake: FakeGitHub, base: str, head: str) -> list[str]:
        assert post(base, pr_payload("opened", 7, head), "race-open") == 202
        assert post(base, comment_payload(7, "/stability review", "dev"), "race-cmd",
                    event="issue_comment") == 202
        return [head]

    fake, (head,) = _run(tmp_path, db, deliver)
    assert doubled(fake) == {} and lost(fake, head) == []
    assert len(fake.check_runs(REPO, head)) == 1 and len(summaries(fake)) == 1


def test_opened_then_a_push_half_a_second_later_publish_once_per_head(
    tmp_path: Path, db: str,
) -> None:
    def deliver(fake: FakeGitHub, base: str, head: str) -> list[str]:
        assert post(base, pr_payload("opened", 7, head), "race-open") == 202
        time.sleep(0.5)
        second = push(fake, 7, {WF: (workflow(), workflow(silenced=True, extra="# b\n"))},
                      tag="h2")
        assert post(base, pr_payload("synchronize", 7, second), "race-push") == 202
        return [head, second]

    fake, (first, second) = _run(tmp_path, db, deliver)
    assert doubled(fake) == {}
    assert len(fake.check_runs(REPO, second)) == 1 and len(summaries(fake)) == 1
    assert len(fake.check_runs(REPO, first)) <= 1  # reviewed only if it ran before the push
    assert len(fake.reviews(REPO, 7)) == 1  # the one finding is commented once
    assert fake.violations == []


def test_three_review_commands_in_a_row_rerun_into_the_same_check_run(
    tmp_path: Path, db: str,
) -> None:
    def deliver(fake: FakeGitHub, base: str, head: str) -> list[str]:
        assert post(base, pr_payload("opened", 7, head), "rerun-open") == 202
        poll(lambda: settled(db) and bool(summaries(fake)), "the first review")
        for i in range(3):
            assert post(base, comment_payload(7, "/stability review", "dev"), f"rerun-{i}",
                        event="issue_comment") == 202
            poll(lambda: settled(db), f"re-run {i + 1}")
        return [head]

    fake, (head,) = _run(tmp_path, db, deliver)
    (check,) = fake.check_runs(REPO, head)
    assert check.status == "completed" and check.conclusion is not None
    assert check.patch_count >= 6  # each re-run went through this run: in_progress, completed
    assert doubled(fake) == {} and len(fake.reviews(REPO, 7)) == 1
