"""Similar-failure lookup cost: pg_trgm on PostgreSQL vs the portable method, N failures.

    .venv/bin/python bench/bench_similar.py [--sizes 1000,10000,40000] [--rounds 3]

For each N: one SQLite file and one fresh PostgreSQL database (tests/pg.py) get the same
N failing jobs, each with a distinct signature: one of the real root causes of
tests/data/ci-logs (round robin) followed by a test id made of words drawn from those
logs, so no two are equal and most share only their real part. The lookups are the
real signatures themselves (33 of the 37 logs have one; threshold 0.4, the default; a
14-day window of one repository), timed per lookup for

* SQLite, the portable method (the baseline: what SQLite always does);
* PostgreSQL, the portable method (what it does when pg_trgm cannot be created);
* PostgreSQL with pg_trgm (`%` against the GIN trigram index).

Every method must return the same jobs with the same scores, or the bench fails.
Ratios are per-lookup time over SQLite's in the same run (lower is faster).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import machine  # noqa: E402
from bot.evidence.index import JobQuery, SqlFailureIndex, open_failure_index  # noqa: E402
from bot.evidence.logstream import analyse_read  # noqa: E402
from tests.evidence.factories import CI_LOGS, NOW, job  # noqa: E402
from tests.pg import PgServer  # noqa: E402

WINDOW = JobQuery(repo="vllm-project/vllm", since=NOW - timedelta(days=14), until=NOW,
                  limit=100)


def real_signatures() -> tuple[list[str], list[str]]:
    """The logs' root-cause signatures, and a vocabulary of their words."""
    signatures, words = [], set()
    for path in sorted(CI_LOGS.glob("*.log")):
        data = path.read_bytes()
        found = analyse_read(io.BytesIO(data).read).job_fields()
        if found.get("signature"):
            signatures.append(str(found["signature"]))
        text = data.decode(errors="replace")
        words.update(w.lower() for w in re.findall(r"[A-Za-z]{4,12}", text))
    return signatures, sorted(words)


@contextmanager
def both_backends(pg: PgServer) -> Iterator[tuple[SqlFailureIndex, SqlFailureIndex]]:
    """A SQLite file and the server's fresh database with pg_trgm, closed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        lite, post = open_failure_index(Path(tmp) / "ci.db"), open_failure_index(pg.url())
        try:
            if not post.trigram:
                raise SystemExit("pg_trgm is not available; nothing to compare")
            yield lite, post
        finally:
            lite.close()
            post.close()


def fill(index: SqlFailureIndex, n: int, signatures: list[str], words: list[str]) -> None:
    rng = random.Random(13)
    base = job("template")
    with index._db.transaction():
        for i in range(n):
            test = "_".join(rng.sample(words, 3))
            signature = f"{signatures[i % len(signatures)]} [test_{test}]"
            index.upsert_job(dataclasses.replace(
                base, job_id=f"j{i}", run_id=f"r{i}", signature=signature, category="other",
                finished_at=NOW - timedelta(minutes=i % (13 * 24 * 60))), now=NOW)


def per_lookup(index: SqlFailureIndex, queries: list[str], portable: bool,
               rounds: int) -> tuple[float, list[list[tuple[str, float]]]]:
    """Median over rounds of the mean seconds per lookup, and the last round's results."""
    times, results = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        results = [[(s.job.job_id, s.similarity) for s in
                    index.similar_failures(q, WINDOW, portable=portable)] for q in queries]
        times.append((time.perf_counter() - started) / len(queries))
    return statistics.median(times), results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,40000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    signatures, words = real_signatures()
    pg = PgServer()
    print(f"# bench_similar: {machine()}; {len(signatures)} real signatures as lookups")
    print("| N failures | SQLite portable ms | PG portable ms (ratio) | PG pg_trgm ms (ratio) "
          "| matches per lookup |")
    print("|---:|---:|---:|---:|---:|")
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            with both_backends(pg) as (lite, post):
                for index in (lite, post):
                    fill(index, n, signatures, words)
                post._db.execute("ANALYZE ci_jobs")
                base, expected = per_lookup(lite, signatures, True, args.rounds)
                pg_portable, same_portable = per_lookup(post, signatures, True, args.rounds)
                trgm, same_trgm = per_lookup(post, signatures, False, args.rounds)
                if same_portable != expected or same_trgm != expected:
                    print(f"N={n}: the backends disagree", file=sys.stderr)
                    return 1
                matches = statistics.mean(len(r) for r in expected)
                print(f"| {n} | {base * 1e3:.2f} | {pg_portable * 1e3:.2f} "
                      f"({pg_portable / base:.2f}×) | {trgm * 1e3:.2f} ({trgm / base:.2f}×) "
                      f"| {matches:.1f} |", flush=True)
    finally:
        pg.drop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
