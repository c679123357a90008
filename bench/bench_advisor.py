"""Added latency of the LLM advisor per review, and its token budgets, on the fakes.

The whole App in-process on the fake GitHub, with a failing nightly job indexed and
`advisor: true` in the repository's config, and the real `openai` client talking to
the fake OpenAI-compatible server (tests/fakeopenai.py) on loopback, which answers at
once. Each round reviews one new PR head with the advisor off and one with it on,
alternating, and times webhook → completed check run. The difference is what the
advisor adds in the bot itself (prompt, HTTP round trip, verification), not a model's
generation time, which a real server adds on top.

Then a budget run: a per-day budget of 5,000 tokens and 10 reviews; the requests sent
and the tokens spent are counted (a request is sent only while the budget has room
for its estimated prompt plus the completion cap).

Run: `.venv/bin/python bench/bench_advisor.py [--n 30]`
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
from bot.advisor.runtime import Advisor
from bot.advisor.settings import AdvisorSettings
from bot.core.config import CONFIG_PATH
from tests.app.e2e_kit import LiveApp, live_app, pr_payload
from tests.evidence.factories import GLM_CONFIG, NOW, nightly_oom_on_fake_github
from tests.fakeopenai import FakeOpenAI, Reply
from tests.github.kit import REPO, new_fake, push

BASE = "model_name: nvidia/GLM-5.2-NVFP4\nenv:\n  VLLM_USE_V2_MODEL_RUNNER: '1'\n"
ANSWER = ("Likely root cause: CUDA OOM on device 3.\nEvidence:\n"
          "> memory allocation failed with OOM on device 3\nDoes this PR address it: partly.")


async def _review(app: LiveApp, number: int) -> float:
    head = push(app.fake, number, {GLM_CONFIG: (BASE, BASE + f"  KNOB_{number}: '1'\n")},
                tag=f"t{number}", title="[CI] Stabilize GLM-5.2 PCP evaluation",
                body="Fixes the OOM in the PCP eval.")
    start = time.perf_counter()
    await app.deliver("pull_request", pr_payload("opened", number, head))
    while not any(c.status == "completed" for c in app.fake.check_runs(REPO, head)):
        await asyncio.sleep(0.001)
    elapsed = time.perf_counter() - start
    await app.settle()
    return elapsed


async def main(n: int) -> None:
    fake = new_fake()
    fake.add_file(REPO, CONFIG_PATH, "advisor: true\n")
    job = nightly_oom_on_fake_github(fake, REPO)
    job["installation"] = {"id": 11, "node_id": "x"}
    with FakeOpenAI(Reply(ANSWER)) as server, tempfile.TemporaryDirectory() as tmp:
        settings = AdvisorSettings(base_url=server.url, model="fake", timeout=5.0)
        async with live_app(Path(tmp), fake) as app:
            ctx = app.handler.context
            ctx.clock = NOW.timestamp
            await app.deliver("workflow_job", job)
            await app.settle()
            advisor = Advisor(settings, clock=NOW.timestamp)
            off: list[float] = []
            on: list[float] = []
            await _review(app, 1)  # warm-up
            for i in range(n):
                ctx.advisor = None
                off.append(await _review(app, 100 + 2 * i))
                ctx.advisor = advisor
                on.append(await _review(app, 101 + 2 * i))
            per_review = advisor.ledger.spent() / max(1, len(server.requests))
            sent = len(server.requests)
            # Budget run: a per-day budget of about five advised reviews.
            budget = 5_000
            ctx.advisor = Advisor(
                AdvisorSettings(base_url=server.url, model="fake", per_day_tokens=budget,
                                per_pr_tokens=budget), clock=NOW.timestamp)
            before = len(server.requests)
            for i in range(10):
                await _review(app, 5000 + i)
            budget_sent = len(server.requests) - before
            budget_spent = ctx.advisor.ledger.spent()
            assert fake.violations == []
    p50_off, p50_on = statistics.median(off), statistics.median(on)
    print(f"machine: {machine()}")
    print(f"reviews: {n} off, {n} on (alternating); model requests sent: {sent}")
    print(f"webhook→check p50: off {p50_off * 1000:.1f} ms, on {p50_on * 1000:.1f} ms, "
          f"added {1000 * (p50_on - p50_off):.1f} ms, ratio {p50_on / p50_off:.2f}")
    print(f"tokens per advised review (fake server's count): {per_review:.0f}")
    print(f"budget run: per-day budget {budget:,} tokens, 10 reviews → {budget_sent} "
          f"requests, {budget_spent:,} tokens spent (≤ budget: {budget_spent <= budget})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=30)
    asyncio.run(main(parser.parse_args().n))
