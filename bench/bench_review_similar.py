"""What the similar-failure lines add to a review, with a 10,000-failure index.

    .venv/bin/python bench/bench_review_similar.py [--failures 10000] [--rounds 15]

One review here is what the App and `review --evidence-db` do for a PR: the engine on the
snapshot (every rule), then the evidence decorator. The PR changes a GLM eval config
that three indexed failures mention (three root-cause signatures: a CUDA OOM, an NCCL
error, a SIGBUS), so the decorator has three signatures to look up. The index also holds
N failing jobs of the same repository and window, each with a distinct signature: one
of the real root causes of tests/data/ci-logs followed by a test id of words drawn from
those logs (as bench/bench_similar.py builds them), spread over 40 job names.

Timed alternately in one run, per backend:

* baseline: engine + "Prior failing runs" alone (`prior_failing_runs` + `attach`, what a
  review did before the similar lines);
* with similar: engine + the full decorator (the same, plus `similar_failures`).

Backends: SQLite (the portable scorer), PostgreSQL with pg_trgm (the GIN index), and
PostgreSQL without it (the portable scorer over PostgreSQL). The ratio is the figure to
read; the bench fails unless the similar lines appear in the second and not in the first.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_similar import both_backends, real_signatures  # noqa: E402
from bench.common import machine  # noqa: E402
from bot.core.config import Config  # noqa: E402
from bot.core.engine import classify_snapshot, review  # noqa: E402
from bot.core.report import Report  # noqa: E402
from bot.evidence.index import SqlFailureIndex  # noqa: E402
from bot.evidence.lookup import evidence_decorator, prior_failing_runs  # noqa: E402
from bot.evidence.section import SIMILAR_SUMMARY, attach  # noqa: E402
from rules import ALL_RULES  # noqa: E402
from tests.conftest import make_snapshot  # noqa: E402
from tests.evidence.factories import GLM_CONFIG, NOW, ci_log, job, pcp_oom_log  # noqa: E402
from tests.pg import PgServer  # noqa: E402

BASE = "model_name: nvidia/GLM-5.2-NVFP4\nenv:\n  VLLM_USE_V2_MODEL_RUNNER: '1'\n"
HEAD = BASE + "  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n"


def fill(index: SqlFailureIndex, n: int, signatures: list[str], words: list[str]) -> None:
    rng = random.Random(13)
    base = job("template")
    related = [
        job("rel-oom", log=pcp_oom_log(), hours_ago=15),
        job("rel-nccl", name="GLM PCP smoke", hours_ago=8, mentions=(GLM_CONFIG,),
            log=ci_log("vllm-issue-42183-nccl-unhandled-cuda-error.log")),
        job("rel-sigbus", name="GLM PCP CPU", hours_ago=9, mentions=(GLM_CONFIG,),
            log=ci_log("pytorch-gha-test-file-sigbus.log")),
    ]
    with index._db.transaction():
        for record in related:
            index.upsert_job(record, now=NOW)
        for i in range(n):
            test = "_".join(rng.sample(words, 3))
            index.upsert_job(dataclasses.replace(
                base, job_id=f"j{i}", run_id=f"r{i}", job_name=f"Shard {i % 40}",
                signature=f"{signatures[i % len(signatures)]} [test_{test}]",
                line=f"failure {i}", category="other", mentions=(), context=(),
                finished_at=NOW - timedelta(minutes=i % (13 * 24 * 60))), now=NOW)


def timed(action: Callable[[], Report]) -> tuple[float, Report]:
    started = time.perf_counter()
    report = action()
    return time.perf_counter() - started, report


def measure(index: SqlFailureIndex, rounds: int) -> tuple[float, float, int]:
    config = Config()
    snapshot = classify_snapshot(make_snapshot([{"path": GLM_CONFIG, "base": BASE,
                                                 "head": HEAD}]), config)
    snapshot = dataclasses.replace(snapshot, repo="vllm-project/vllm", number=51015,
                                   base_ref="main", head_ref="fix-ci")
    decorate = evidence_decorator(index, now=NOW)

    def baseline() -> Report:
        report = review(snapshot, config, ALL_RULES)
        return attach(report, prior_failing_runs(index, snapshot, now=NOW))

    def with_similar() -> Report:
        return decorate(review(snapshot, config, ALL_RULES), snapshot)

    before, after = [], []
    lines = 0
    for _ in range(rounds):
        seconds, plain = timed(baseline)
        before.append(seconds)
        seconds, full = timed(with_similar)
        after.append(seconds)
        body_plain, body_full = plain.sections[0][1], full.sections[0][1]
        if SIMILAR_SUMMARY in body_plain or SIMILAR_SUMMARY not in body_full:
            raise SystemExit("the similar lines are not where they should be")
        lines = body_full.split("<details>", 1)[1].count("\n- ")
    return statistics.median(before), statistics.median(after), lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--failures", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    signatures, words = real_signatures()
    pg = PgServer()
    print(f"# bench_review_similar: {machine()}; {args.failures} failures, "
          f"{args.rounds} alternating rounds, medians")
    print("| backend | review ms | with similar ms | added ms | ratio | lines shown |")
    print("|---|---:|---:|---:|---:|---:|")
    try:
        with both_backends(pg) as (lite, post):
            for index in (lite, post):
                fill(index, args.failures, signatures, words)
            post._db.execute("ANALYZE ci_jobs")
            runs: list[tuple[str, SqlFailureIndex, bool]] = [
                ("SQLite (portable)", lite, False), ("PostgreSQL (pg_trgm)", post, True),
                ("PostgreSQL (portable)", post, False)]
            for name, index, trigram in runs:
                index.trigram = trigram  # which path similar_failures takes
                before, after, lines = measure(index, args.rounds)
                print(f"| {name} | {before * 1e3:.1f} | {after * 1e3:.1f} | "
                      f"{(after - before) * 1e3:+.1f} | {after / before:.2f} | {lines} |",
                      flush=True)
    finally:
        pg.drop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
