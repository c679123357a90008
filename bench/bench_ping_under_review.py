"""Does intake answer while the largest PR is reviewed? `ping` latency, idle vs during.

The whole App runs in-process (tests/app/e2e_kit.py: real web app, queue, worker,
handler) on the fake GitHub, which here shares the process and its event loop. A
`ping` is sent every 20 ms: first with nothing to do (the idle baseline), then while
one PR of FILES in-scope files × LINES lines is reviewed, with the review's CPU steps
on the review pool (as `serve` runs them) and, for comparison, on the event loop.

Run: `.venv/bin/python bench/bench_ping_under_review.py [--files 3000 --lines 1000]`
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine
from tests.app.e2e_kit import LiveApp, live_app, pr_payload
from tests.app.helpers import headers
from tests.github.kit import REPO, new_fake, push, workflow

PING = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()


async def _ping(app: LiveApp) -> float:
    start = time.perf_counter()
    async with app.session.post(f"{app.url}/webhook", data=PING,
                                headers=headers("ping", PING)) as resp:
        await resp.read()
        assert resp.status == 200
    return time.perf_counter() - start


def _big_pr(app: LiveApp, number: int, files: int, lines: int) -> str:
    body = workflow()
    filler = "".join(f"# line {j}: keep the runners warm\n"
                     for j in range(max(0, lines - body.count("\n"))))
    texts = {f".github/workflows/w{i}.yml": (None, body + filler) for i in range(files)}
    return push(app.fake, number, texts, tag=f"big{number}")


def _done(app: LiveApp, head: str) -> bool:
    return any(c.status == "completed" for c in app.fake.check_runs(REPO, head))


async def _during(app: LiveApp, number: int, head: str) -> tuple[list[float], float]:
    start = time.perf_counter()
    await app.deliver("pull_request", pr_payload("opened", number, head))
    pings: list[float] = []
    while not _done(app, head):
        pings.append(await _ping(app))
        await asyncio.sleep(0.02)
    return pings, time.perf_counter() - start


def _row(name: str, values: list[float], review_s: float | None) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    review = f"{review_s:.1f}" if review_s is not None else "—"
    return (f"| {name} | {len(values)} | {statistics.median(values) * 1000:.1f} | "
            f"{p99 * 1000:.1f} | {max(values) * 1000:.1f} | {review} |")


async def main(files: int, lines: int) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        async with live_app(Path(tmp), new_fake()) as app:
            idle = []
            for _ in range(100):
                idle.append(await _ping(app))
                await asyncio.sleep(0.02)
            rows.append(_row("idle (baseline)", idle, None))
            pool = app.handler.context.review_pool
            for mode, number in (("review on the pool (serve)", 1),
                                 ("review on the event loop (before)", 2)):
                app.handler.context.review_pool = pool if number == 1 else None
                head = _big_pr(app, number, files, lines)
                pings, took = await _during(app, number, head)
                rows.append(_row(mode, pings, took))
            app.handler.context.review_pool = pool
            assert app.fake.violations == []
    print(f"machine: {machine()}; PR: {files} files x {lines} lines")
    print("| pings | n | p50 ms | p99 ms | max ms | review s |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--lines", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.files, args.lines))
