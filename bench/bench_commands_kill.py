"""`serve` SIGKILLed at a random moment of a `/stability ignore` command, restarted on
the same SQLite database: the command must end done once.

    .venv/bin/python bench/bench_commands_kill.py [--trials 20] [--seed 1] [--window 1.5]

Each trial: a fresh database and fake GitHub with one PR whose head silences a
workflow step, reviewed once; a maintainer's `/stability ignore silenced-test -- …`
comment is posted, and after a uniformly random 0 to --window s the process is
SIGKILLed (GitHub answers each write 0.3 s late, so kills land while the waiver is
recorded, the review re-runs, or the reply is in flight). Then `serve` is restarted
and the comment must end handled. Counted:

- lost: the comment never handled, no waiver, or no reply;
- doubled: more than one waiver or more than one reply to the comment.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.render import markers  # noqa: E402
from bot.store import open_store  # noqa: E402
from tests.app.e2e_kit import comment_payload, pr_payload  # noqa: E402
from tests.app.serve_kit import poll, post, serve  # noqa: E402
from tests.fakegithub import FakeGitHub, running_fake_github  # noqa: E402
from tests.github.kit import REPO, new_fake, push, workflow  # noqa: E402

WF = ".github/workflows/ci.yml"
LEASE = {"CI_STABILITY_LEASE_SECONDS": "2"}
COMMENT_ID = 4242


def _count(db: str, sql: str) -> int:
    store = open_store(db)
    try:
        return int(store.db.execute(sql, (COMMENT_ID,) if "?" in sql else ()).fetchone()[0])
    finally:
        store.close()


def _replies(fake: FakeGitHub) -> int:
    marker = markers.command_reply(COMMENT_ID)
    return sum(1 for c in fake.issue_comments(REPO, 7) if marker in c.body)


def _phase(db: str) -> str:
    """How far the killed process got with the command."""
    if _count(db, "SELECT COUNT(*) FROM handled_comments WHERE comment_id = ?"):
        return "done"
    store = open_store(db)
    try:
        progress = store.command_progress(COMMENT_ID)
    finally:
        store.close()
    if progress.get("reply_intent"):
        return "reply in flight or posted"
    if _count(db, "SELECT COUNT(*) FROM waivers"):
        return "waiver recorded, review re-run"
    return "before the waiver"


def trial(rng: random.Random, window: float, work: Path) -> tuple[str, str]:
    """('ok' | 'lost' | 'doubled', how far the command had got at the kill)."""
    fake = new_fake()
    db = str(work / "app.db")
    with running_fake_github(fake):
        head = push(fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
        fake.set_permission(REPO, "maint", "maintain")
        with serve(work, fake.url, db, LEASE) as (proc, base):
            assert post(base, pr_payload("opened", 7, head), "open") == 202
            poll(lambda: len(fake.issue_comments(REPO, 7)) == 1, "the summary")
            for method in ("POST", "PATCH"):
                fake.inject_delay(method, r".*", seconds=0.3, times=None)
            body = "/stability ignore silenced-test -- tracked in #12"
            assert post(base, comment_payload(7, body, "maint", comment_id=COMMENT_ID),
                        "comment", event="issue_comment") == 202
            time.sleep(rng.uniform(0, window))
            proc.kill()
            proc.wait()
        mid_way = _phase(db)
        fake.faults.clear()
        with serve(work, fake.url, db, LEASE):
            try:
                poll(lambda: _count(db, "SELECT COUNT(*) FROM handled_comments"
                                        " WHERE comment_id = ?") == 1, "the command", 60)
            except AssertionError:
                return "lost", mid_way
            time.sleep(1.0)  # anything still in flight lands
        waivers = _count(db, "SELECT COUNT(*) FROM waivers")
        replies = _replies(fake)
    if waivers == 0 or replies == 0:
        return "lost", mid_way
    if waivers > 1 or replies > 1:
        return "doubled", mid_way
    return "ok", mid_way


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--window", type=float, default=1.5)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outcomes: Counter[str] = Counter()
    phases: Counter[str] = Counter()
    for number in range(args.trials):
        with tempfile.TemporaryDirectory() as tmp:
            outcome, phase = trial(rng, args.window, Path(tmp))
        outcomes[outcome] += 1
        phases[phase] += 1
        print(f"trial {number + 1}: {outcome} (killed: {phase})", flush=True)
    print(f"{args.trials} trials: {outcomes['ok']} ok, {outcomes['lost']} lost, "
          f"{outcomes['doubled']} doubled; kills landed: "
          + ", ".join(f"{phase} {count}" for phase, count in phases.most_common()))
    return 0 if outcomes["ok"] == args.trials else 1


if __name__ == "__main__":
    raise SystemExit(main())
