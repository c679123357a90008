"""SIGKILL `serve` at random moments of a review whose writes GitHub answers slowly:
0 lost and 0 doubled check runs, reviews, inline comments, annotations, summaries.

    .venv/bin/python bench/bench_kill_publish.py --mode sqlite [--trials 20] [--seed 1]
    .venv/bin/python bench/bench_kill_publish.py --mode postgres [--trials 20] [--seed 1]

Each trial: a fresh database and fake GitHub, one PR whose head silences 60 jobs (60
findings: a check run with two batches of annotations, a review with inline comments,
a summary comment). Every write (POST/PATCH) takes effect at once but is answered
only after --delay s (0.25), so a kill often lands between a write landing and the
worker learning of it. The `opened` webhook is posted, and after a uniformly random
0 to --window s (2.5) the process is killed with SIGKILL:

- `sqlite`: one replica; it is restarted on the same file;
- `postgres`: two replicas on one database; the one holding the delivery's lease is
  killed (a random one when none does yet), the survivor takes over when the lease
  (2 s) runs out.

Then, once nothing is pending or running and a further two lease periods passed,
the fake GitHub is counted: lost = no completed check run, a run left in_progress, no
review or no summary, or fewer than 60 annotations; doubled = two of anything (runs
on the head, reviews, one inline comment or annotation twice, summaries).
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

from tests.app.e2e_kit import pr_payload  # noqa: E402
from tests.app.race_kit import doubled, lost, many_jobs, settled, summaries  # noqa: E402
from tests.app.serve_kit import holder_pid, poll, post, serve  # noqa: E402
from tests.fakegithub import FakeGitHub, running_fake_github  # noqa: E402
from tests.github.kit import REPO, new_fake, push  # noqa: E402
from tests.pg import PgServer  # noqa: E402

LEASE = 2.0
JOBS = 60
WF = ".github/workflows/ci.yml"
WRITES = r"/check-runs|/pulls/7/reviews$|/issues/7/comments$"


def _seed(delay: float) -> tuple[FakeGitHub, str]:
    fake = new_fake()
    for method in ("POST", "PATCH"):
        fake.inject_delay(method, WRITES, seconds=delay, times=None, after=True)
    head = push(fake, 7, {WF: (many_jobs(JOBS, silenced=False),
                               many_jobs(JOBS, silenced=True))}, tag="h1")
    return fake, head


def _landed(fake: FakeGitHub, head: str) -> str:
    """What had landed on GitHub at the kill: runs, annotations, reviews, summaries."""
    runs = fake.check_runs(REPO, head)
    return (f"runs={len(runs)} ann={sum(len(r.annotations) for r in runs)} "
            f"reviews={len(fake.reviews(REPO, 7))} summaries={len(summaries(fake))}")


def _count(fake: FakeGitHub, head: str, finished: bool) -> dict[str, object]:
    runs = fake.check_runs(REPO, head)
    missing = lost(fake, head)
    if runs and len(runs[-1].annotations) < JOBS:
        missing.append(f"annotations ({len(runs[-1].annotations)} of {JOBS})")
    return {"finished": finished, "lost": missing, "doubled": doubled(fake),
            "check_runs": len(runs), "reviews": len(fake.reviews(REPO, 7)),
            "violations": len(fake.violations)}


def trial_sqlite(rng: random.Random, workdir: Path, args: argparse.Namespace
                 ) -> dict[str, object]:
    db = str(workdir / f"t{time.monotonic_ns()}.db")
    fake, head = _seed(args.delay)
    kill_after = rng.uniform(0.0, args.window)
    with running_fake_github(fake):
        with serve(workdir, fake.url, db) as (proc, base):
            post(base, pr_payload("opened", 7, head), f"trial-{time.monotonic_ns()}")
            time.sleep(kill_after)
            proc.kill()
            proc.wait()
            at_kill = _landed(fake, head)
        finished = True
        with serve(workdir, fake.url, db):
            try:
                poll(lambda: settled(db) and not lost(fake, head), "the review", timeout=40)
            except AssertionError:
                finished = False
            time.sleep(2 * LEASE)  # time for a late duplicate to show
        return {"kill_after_s": round(kill_after, 2), "at_kill": at_kill,
                **_count(fake, head, finished)}


def trial_postgres(pg: PgServer, rng: random.Random, workdir: Path, args: argparse.Namespace
                   ) -> dict[str, object]:
    url = pg.url()
    fake, head = _seed(args.delay)
    env = {"CI_STABILITY_LEASE_SECONDS": str(LEASE)}
    kill_after = rng.uniform(0.0, args.window)
    delivery = f"trial-{time.monotonic_ns()}"
    with running_fake_github(fake):
        with serve(workdir, fake.url, url, env) as (one, base), \
                serve(workdir, fake.url, url, env) as (two, _):
            post(base, pr_payload("opened", 7, head), delivery)
            time.sleep(kill_after)
            pid = holder_pid(url, delivery)
            victim = one if pid == one.pid else two if pid == two.pid else rng.choice([one, two])
            victim.kill()
            victim.wait()
            at_kill = _landed(fake, head)
            finished = True
            try:
                poll(lambda: settled(url) and not lost(fake, head), "the review", timeout=40)
            except AssertionError:
                finished = False
            time.sleep(2 * LEASE)
        return {"kill_after_s": round(kill_after, 2), "held": pid is not None,
                "at_kill": at_kill, **_count(fake, head, finished)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--window", type=float, default=2.5)
    parser.add_argument("--delay", type=float, default=0.25)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    pg = PgServer() if args.mode == "postgres" else None
    totals: Counter[str] = Counter()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in range(args.trials):
                if pg is not None:
                    result = trial_postgres(pg, rng, Path(tmp), args)
                else:
                    result = trial_sqlite(rng, Path(tmp), args)
                totals["trials"] += 1
                totals["lost"] += bool(result["lost"])
                totals["doubled"] += bool(result["doubled"])
                totals["violations"] += bool(result["violations"])
                at_kill = str(result["at_kill"])
                totals["mid_publication"] += ("runs=0" not in at_kill
                                              and "summaries=1" not in at_kill)
                print(f"trial {n + 1:2d}: {result}", flush=True)
    finally:
        if pg is not None:
            pg.drop()
    print(f"\n{args.mode}: {totals['trials']} SIGKILLs: {totals['lost']} lost, "
          f"{totals['doubled']} doubled, {totals['violations']} with API violations; "
          f"{totals['mid_publication']} kills after the first write and before the last")
    return 0 if totals["lost"] == totals["doubled"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
