"""Reviews per second with 1 vs 2 `serve` replicas on one PostgreSQL database.

    .venv/bin/python bench/bench_replicas_throughput.py [--prs 40] [--rounds 2]

Each round, for 1 and then 2 replicas (alternating which goes first): a fresh
database and fake GitHub with --prs pull requests (one silenced workflow job each: a
check run, a review and a summary comment per PR), all `opened` webhooks posted to
the first replica, and the clock runs until every PR has a completed check run and a
summary. The ratio is 2-replica over 1-replica throughput, measured in the same run.

On this machine (2 cores shared with other work) the fake GitHub, the load and the
replicas share the same cores, so the ratio shows how much the per-PR lease and the
shared queue cost or allow, not what two machines would give.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.app.e2e_kit import pr_payload  # noqa: E402
from tests.app.race_kit import doubled, summaries  # noqa: E402
from tests.app.serve_kit import poll, post, serve  # noqa: E402
from tests.fakegithub import running_fake_github  # noqa: E402
from tests.github.kit import REPO, new_fake, push, workflow  # noqa: E402
from tests.pg import PgServer  # noqa: E402

WF = ".github/workflows/ci.yml"


def one_run(pg: PgServer, replicas: int, prs: int, workdir: Path) -> float:
    """Reviews per second over `prs` pull requests."""
    url = pg.url()
    fake = new_fake()
    with running_fake_github(fake):
        heads = {n: push(fake, n, {WF: (workflow(), workflow(silenced=True))}, tag=f"h{n}")
                 for n in range(1, prs + 1)}
        with ExitStack() as stack:
            bases = [stack.enter_context(serve(workdir, fake.url, url))[1]
                     for _ in range(replicas)]
            started = time.monotonic()
            for n, head in heads.items():
                post(bases[0], pr_payload("opened", n, head), f"tp-{replicas}-{n}-{time.time()}")

            def done() -> bool:
                return all(fake.check_runs(REPO, h) and fake.check_runs(REPO, h)[-1].status
                           == "completed" and summaries(fake, n) for n, h in heads.items())

            poll(done, "every review", timeout=600)
            elapsed = time.monotonic() - started
        bad = {n: d for n in heads if (d := doubled(fake, n))}
        if bad or fake.violations:
            raise SystemExit(f"published twice or wrongly: {bad} {fake.violations[:3]}")
    return prs / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    pg = PgServer()
    rates: dict[int, list[float]] = {1: [], 2: []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                for replicas in ((1, 2) if r % 2 == 0 else (2, 1)):
                    rate = one_run(pg, replicas, args.prs, Path(tmp))
                    rates[replicas].append(rate)
                    print(f"round {r + 1}: {replicas} replica(s): {rate:.2f} reviews/s",
                          flush=True)
    finally:
        pg.drop()
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(f"\nmedian of {args.rounds}: 1 replica {one:.2f} reviews/s, 2 replicas "
          f"{two:.2f} reviews/s, ratio {two / one:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
