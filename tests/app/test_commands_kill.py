"""`serve` SIGKILLed in the middle of a slash command, restarted on the same database:
the command still gets done, once (one waiver, one reply)."""

from __future__ import annotations

from pathlib import Path

from bot.store import open_store
from tests.app.e2e_kit import comment_payload, pr_payload
from tests.app.serve_kit import poll, post, serve
from tests.fakegithub import FakeGitHub, running_fake_github
from tests.github.kit import REPO, new_fake, push, workflow

WF = ".github/workflows/ci.yml"
BODY = "/stability ignore silenced-test -- tracked in #12"
# The dead process's lease on the PR runs out this fast, so the restart takes it over.
LEASE = {"CI_STABILITY_LEASE_SECONDS": "3"}


def _store_says(db: str, query: str, params: tuple[object, ...]) -> int:
    store = open_store(db)
    try:
        return int(store.db.execute(query, params).fetchone()[0])
    finally:
        store.close()


def waivers(db: str) -> int:
    return _store_says(db, "SELECT COUNT(*) FROM waivers WHERE repo = ?", (REPO,))


def handled(db: str, comment_id: int) -> bool:
    return _store_says(db, "SELECT COUNT(*) FROM handled_comments WHERE comment_id = ?",
                       (comment_id,)) == 1


def waived_replies(fake: FakeGitHub) -> int:
    return sum(1 for c in fake.issue_comments(REPO, 7) if "Waived" in c.body)


class _KillPoint:
    def __init__(self, fake: FakeGitHub, db: str) -> None:
        self.fake, self.db = fake, db

    def arm(self) -> None: ...

    def disarm(self) -> None: ...

    def __call__(self) -> bool:
        raise NotImplementedError


def _kill_then_restart(tmp_path: Path, fake: FakeGitHub, db: str, comment_id: int,
                       killable: _KillPoint) -> None:
    """Open the PR, send the command, kill once `killable()` holds, restart."""
    head = push(fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
    fake.set_permission(REPO, "maint", "maintain")
    with serve(tmp_path, fake.url, db, LEASE) as (proc, base):
        assert post(base, pr_payload("opened", 7, head), "open-1") == 202
        poll(lambda: len(fake.issue_comments(REPO, 7)) == 1, "the summary comment")
        killable.arm()
        assert post(base, comment_payload(7, BODY, "maint", comment_id=comment_id),
                    f"comment-{comment_id}", event="issue_comment") == 202
        poll(killable, "the command to reach the kill point")
        proc.kill()
        proc.wait()
    assert not handled(db, comment_id)
    killable.disarm()
    with serve(tmp_path, fake.url, db, LEASE):
        poll(lambda: handled(db, comment_id), "the command to finish after the restart")
    assert waivers(db) == 1
    assert waived_replies(fake) == 1
    assert fake.violations == []


class _ReplyRefused(_KillPoint):
    """Kill while GitHub keeps refusing the reply (after the waiver was recorded)."""

    def arm(self) -> None:
        self.fault = self.fake.inject("POST", r"/issues/7/comments$", status=502, times=None)

    def disarm(self) -> None:
        self.fake.faults.remove(self.fault)

    def __call__(self) -> bool:
        refused = [c for c in self.fake.calls_to("issues/create-comment") if c.status == 502]
        return bool(refused) and waivers(self.db) == 1


class _MidReview(_KillPoint):
    """Kill while the re-run review the waiver asked for hangs on the file list (the
    comparison, or list-files where the comparison does not serve)."""

    def arm(self) -> None:
        self.fake.inject_delay("GET", r"/compare/|/pulls/7/files", seconds=30, times=1)

    def __call__(self) -> bool:
        return waivers(self.db) == 1 and waived_replies(self.fake) == 0


def test_kill_while_the_reply_is_refused_then_restart(tmp_path: Path) -> None:
    fake = new_fake()
    db = str(tmp_path / "app.db")
    with running_fake_github(fake):
        _kill_then_restart(tmp_path, fake, db, 801, _ReplyRefused(fake, db))


def test_kill_during_the_re_run_review_then_restart(tmp_path: Path) -> None:
    fake = new_fake()
    db = str(tmp_path / "app.db")
    with running_fake_github(fake):
        _kill_then_restart(tmp_path, fake, db, 802, _MidReview(fake, db))
