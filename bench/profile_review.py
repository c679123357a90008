"""CPU time of each phase and each rule of one in-process review of the bench's patch.

Run: `.venv/bin/python bench/profile_review.py [--rounds N] [--profile FILE]`. Every
round is a fresh process, as a CLI review is: the shared analyses are memoized on the
snapshot and in module-level caches (knob filters, compiled regexes), so a second
review in one process would flatter the rules. It reports the median CPU
and the least CPU seconds (`time.process_time`) per phase over the rounds (the least is
the steadier figure on a shared machine), with the collector off as in
the CLI. Rules run in the registry's order, so a rule's figure includes the shared
analyses it is the first to ask for. `--profile FILE` writes one round's cProfile stats.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_review import generate
from bench.common import OUT
from bot.core import engine
from bot.core.config import Config
from bot.core.findings import Finding
from bot.core.rule import Rule, RuleContext
from bot.core.surfaces import classify, surface_table
from bot.render import render
from bot.sources.patch import snapshot_from_patch
from rules import ALL_RULES


class _Timed:
    """A rule whose `check` is timed into `seconds[rule id]`."""

    def __init__(self, rule: Rule, seconds: dict[str, float]) -> None:
        self._rule = rule
        self._seconds = seconds
        self.id, self.severity, self.options = rule.id, rule.severity, rule.options

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        start = time.process_time()
        found = list(self._rule.check(ctx))
        self._seconds[self.id] += time.process_time() - start
        return found

    def summary(self) -> str:
        return self._rule.summary()

    def docs(self) -> str:
        return self._rule.docs()


def one_round(data: bytes) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    config = Config()
    table = surface_table(config.surfaces)
    start = time.process_time()
    snapshot = snapshot_from_patch(data, wanted=lambda p: classify(p, table) is not None)
    seconds["parse"] = time.process_time() - start
    rules = [_Timed(r, seconds) for r in ALL_RULES]
    start = time.process_time()
    report = engine.review(snapshot, config, rules)
    total = time.process_time() - start
    seconds["engine (outside rules)"] = total - sum(seconds[r.id] for r in ALL_RULES)
    start = time.process_time()
    render(report, "json", ALL_RULES)
    seconds["render json"] = time.process_time() - start
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", metavar="FILE")
    parser.add_argument("--one-round", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    patch = OUT / "synthetic-pr.diff"
    if args.one_round:  # the child: one review, its figures as JSON
        gc.disable()
        data = patch.read_bytes()
        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(one_round, data)
            profiler.dump_stats(args.profile)
        else:
            print(json.dumps(one_round(data)))
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    generate(patch, 2000, 200_000)
    child = [sys.executable, __file__, "--one-round"]
    if args.profile:
        subprocess.run([*child, "--profile", args.profile], check=True)
    rounds = [json.loads(subprocess.run(child, check=True, capture_output=True).stdout)
              for _ in range(args.rounds)]
    print(f"| phase | CPU s, median of {args.rounds} rounds | least |")
    print("|---|---|---|")
    for name in rounds[0]:
        print(f"| {name} | {statistics.median(r[name] for r in rounds):.3f} | "
              f"{min(r[name] for r in rounds):.3f} |")
    totals = [sum(r.values()) for r in rounds]
    print(f"| total (no start-up, no imports) | {statistics.median(totals):.3f} | "
          f"{min(totals):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
