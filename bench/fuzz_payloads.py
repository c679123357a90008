"""Fuzz the App: mutated, correctly signed webhook payloads → no 5xx, every 202 stored,
every delivery done or dead-lettered with a reason, no traceback, no hang, no double post.

    .venv/bin/python bench/fuzz_payloads.py --count 10000 --seed 1

The seeds are the real payloads vendored in tests/data/github/webhooks, pointed at one
PR on the fake GitHub (tests/fakegithub, loopback); the mutants come from
tests/app/payload_mutants.py (tree mutations of tests/core/mutants.py, plus raw nesting,
huge strings and non-UTF-8 bytes), each signed with the webhook secret and POSTed to a
real `ci-stability serve` subprocess while a prober GETs /healthz/live every 0.25 s.
`--bound` is how long every delivery gets to reach a final state after the last POST.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import OUT, machine  # noqa: E402
from tests.app.payload_mutants import fuzz  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="mutated deliveries")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--bound", type=float, default=900.0, help="seconds to settle")
    args = parser.parse_args()
    work = OUT / "fuzz-payloads"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    started = time.perf_counter()
    report = fuzz(work, args.count, args.seed, args.bound, args.concurrency)
    broken = report.broken()
    result = {
        "machine": machine(), "seed": args.seed, "posted": report.posted,
        "http": dict(sorted(report.by_status.items())),
        "final_states": dict(sorted(report.final.items())), "retried": report.retried,
        "by_kind": {kind: dict(sorted(c.items())) for kind, c in report.by_kind.items()},
        "dead_reasons": dict(report.dead_reasons.most_common(15)),
        "liveness_probes": report.liveness_probes,
        "liveness_failures": report.liveness_failures,
        "server_errors": len(report.server_errors), "unstored_202": len(report.unstored),
        "unsettled": len(report.unsettled), "tracebacks": len(report.tracebacks),
        "doubled": report.doubled, "seconds": round(time.perf_counter() - started, 1),
        "first_broken": [line[:300] for line in broken[:5]],
    }
    print(json.dumps(result, indent=2))
    return 0 if not broken else 1


if __name__ == "__main__":
    raise SystemExit(main())
