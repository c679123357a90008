"""Two `serve` replicas on one PostgreSQL database, one SIGKILLed at a random moment.

    .venv/bin/python bench/bench_replicas_crash.py [--trials 20] [--seed 1]

Each trial: a fresh database (on the local server, as the tests use it) and a fresh
fake GitHub with one PR whose head silences a workflow step (one finding: a check
run, a review and a summary comment). Both replicas start; the `opened` webhook is
posted to one of them; after a uniformly random 0 to --window s (1.4; the file
list answers after 1 s, so kills land before the claim, mid-review, mid-publication
or just after the end) the replica holding the delivery's lease is killed with SIGKILL (a random one
when no replica holds it). The survivor must finish. Counted on the fake GitHub once
the survivor is done and a further two lease periods have passed:

- lost: no completed check run or no summary comment;
- doubled: more than one check run on the head, review or summary comment.
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

from bot.store import open_store  # noqa: E402
from tests.app.e2e_kit import pr_payload  # noqa: E402
from tests.app.serve_kit import holder_pid, poll, post, serve  # noqa: E402
from tests.fakegithub import running_fake_github  # noqa: E402
from tests.github.kit import REPO, new_fake, push, workflow  # noqa: E402
from tests.pg import PgServer  # noqa: E402

LEASE = 2.0
args_window = [1.4]  # set from --window
WF = ".github/workflows/ci.yml"


def trial(pg: PgServer, rng: random.Random, workdir: Path) -> dict[str, object]:
    url = pg.url()
    fake = new_fake()
    fake.inject_delay("GET", r"/pulls/7/files|/compare/", seconds=1.0, times=1)
    env = {"CI_STABILITY_LEASE_SECONDS": str(LEASE)}
    kill_after = rng.uniform(0.0, args_window[0])
    with running_fake_github(fake):
        head = push(fake, 7, {WF: (workflow(), workflow(silenced=True))}, tag="h1")
        with serve(workdir, fake.url, url, env) as (one, base_one), \
                serve(workdir, fake.url, url, env) as (two, _):
            post(base_one, pr_payload("opened", 7, head), f"trial-{time.monotonic_ns()}")
            time.sleep(kill_after)
            delivery = _only_delivery(url)
            pid = holder_pid(url, delivery)
            victim = one if pid == one.pid else two if pid == two.pid else rng.choice([one, two])
            victim.kill()
            victim.wait()
            lost = False
            try:
                poll(lambda: any(c.status == "completed" for c in fake.check_runs(REPO, head))
                     and len(fake.issue_comments(REPO, 7)) >= 1, "the review", timeout=40)
            except AssertionError:
                lost = True
            time.sleep(2 * LEASE)  # time for a late duplicate to show
        runs = fake.check_runs(REPO, head)
        return {
            "kill_after_s": round(kill_after, 2), "held": pid is not None, "lost": lost,
            "check_runs": len(runs), "reviews": len(fake.reviews(REPO, 7)),
            "summaries": len(fake.issue_comments(REPO, 7)),
            "stuck_in_progress": sum(c.status != "completed" for c in runs),
            "violations": len(fake.violations),
        }


def _only_delivery(url: str) -> str:
    store = open_store(url)
    try:
        row = store.db.execute("SELECT id FROM deliveries").fetchone()
    finally:
        store.close()
    return str(row[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--window", type=float, default=1.4)
    args = parser.parse_args()
    args_window[0] = args.window
    rng = random.Random(args.seed)
    pg = PgServer()
    totals: Counter[str] = Counter()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in range(args.trials):
                result = trial(pg, rng, Path(tmp))
                doubled = [k for k in ("check_runs", "reviews", "summaries")
                           if int(result[k]) > 1]  # type: ignore[call-overload]
                totals["trials"] += 1
                totals["lost"] += bool(result["lost"])
                totals["doubled"] += bool(doubled)
                totals["killed_while_holding"] += bool(result["held"])
                flag = "DOUBLED " + ",".join(doubled) if doubled else ""
                print(f"trial {n + 1:2d}: {result} {flag}", flush=True)
    finally:
        pg.drop()
    print(f"\n{totals['trials']} trials: {totals['lost']} lost, {totals['doubled']} doubled; "
          f"{totals['killed_while_holding']} kills hit the replica holding the delivery")
    return 0 if totals["lost"] == totals["doubled"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
