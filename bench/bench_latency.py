"""Webhook-to-completed-check latency of the whole App on the fake GitHub.

Runs the real web app, queue, worker and handler in-process against the fake GitHub
(tests/fakegithub) and measures, per signed `pull_request.opened` delivery, the time
from sending the webhook to the fake holding a completed "CI stability review" check
run for that head. Two runs: one delivery at a time (uncontended) and N at once.

GitHub asks integrations to leave >= 1 s between mutating requests; that spacing is
set to 0 here so the figures show the bot's own processing. In production add about
one second per write after the first (a review makes 3-5 writes).

Run: `.venv/bin/python bench/bench_latency.py [--n 60]`
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine
from tests.app.e2e_kit import LiveApp, live_app, pr_payload
from tests.github.kit import REPO, new_fake, push, workflow

WF = ".github/workflows/ci.yml"


def _completed(app: LiveApp, head: str) -> bool:
    return any(c.status == "completed" for c in app.fake.check_runs(REPO, head))


async def _one(app: LiveApp, number: int, tag: str) -> float:
    head = push(app.fake, number, {WF: (workflow(), workflow(silenced=True))}, tag=tag)
    start = time.perf_counter()
    await app.deliver("pull_request", pr_payload("opened", number, head))
    while not _completed(app, head):
        await asyncio.sleep(0.001)
    return time.perf_counter() - start


async def _burst(app: LiveApp, first: int, n: int) -> list[float]:
    heads = [push(app.fake, first + i, {WF: (workflow(), workflow(silenced=True))},
                  tag=f"b{i}") for i in range(n)]
    start = time.perf_counter()
    done: dict[str, float] = {}
    await asyncio.gather(*(app.deliver("pull_request", pr_payload("opened", first + i, h))
                           for i, h in enumerate(heads)))
    while len(done) < n:
        for head in heads:
            if head not in done and _completed(app, head):
                done[head] = time.perf_counter() - start
        await asyncio.sleep(0.001)
    return list(done.values())


def _row(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return (f"| {name} | {len(values)} | {statistics.median(values) * 1000:.0f} | "
            f"{p99 * 1000:.0f} | {max(values) * 1000:.0f} |")


async def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with live_app(Path(tmp), new_fake()) as app:
            await _one(app, 1, "warm-up")
            sequential = [await _one(app, 100 + i, f"s{i}") for i in range(n)]
            burst = await _burst(app, 1000, n)
            assert app.fake.violations == []
    print(f"machine: {machine()}")
    print("| deliveries | n | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|")
    print(_row("one at a time", sequential))
    print(_row(f"{n} at once (1 worker)", burst))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=60)
    asyncio.run(main(parser.parse_args().n))
