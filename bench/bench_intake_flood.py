"""`serve`'s memory under a flood of large badly signed webhooks.

Starts a real `ci-stability serve` process (tests/app/serve_kit.py), reads its RSS,
sends CONCURRENCY requests of SIZE MB at once with a wrong `X-Hub-Signature-256`
(ROUNDS times), and reads its RSS and peak RSS (VmHWM) again. Each request must be
refused with 401 and nothing stored. The body is streamed through the HMAC into a
256 KiB in-memory spool (bot/app/signed_body.py), so the peak should stay near the
idle figure whatever the flood.

Run: `.venv/bin/python bench/bench_intake_flood.py [--concurrency 32 --size-mb 24]`
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine
from tests.app.helpers import headers
from tests.app.serve_kit import serve


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


async def _flood(base: str, concurrency: int, size: int) -> list[int]:
    body = b'{"action": "opened", "padding": "' + b"x" * (size - 40) + b'"}'
    hdrs = headers("pull_request", body, secret="not-the-secret")
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300)) as session:
        async def one() -> int:
            async with session.post(f"{base}/webhook", data=body, headers=hdrs) as resp:
                await resp.read()
                return resp.status
        return list(await asyncio.gather(*(one() for _ in range(concurrency))))


def main(concurrency: int, size_mb: int, rounds: int) -> None:
    # No GitHub is needed to refuse webhooks; GET /app fails fast and is logged.
    with tempfile.TemporaryDirectory() as tmp, serve(
            Path(tmp), "http://127.0.0.1:9", extra_env={"METRICS_PORT": "off"}) as (proc, base):
        before = _status_kb(proc.pid, "VmRSS")
        statuses: list[int] = []
        for _ in range(rounds):
            statuses += asyncio.run(_flood(base, concurrency, size_mb * 1024 * 1024))
        after, peak = _status_kb(proc.pid, "VmRSS"), _status_kb(proc.pid, "VmHWM")
    assert set(statuses) == {401}, statuses
    print(f"machine: {machine()}")
    print("| flood | requests | RSS before MB | RSS after MB | peak RSS MB | peak / before |")
    print("|---|---|---|---|---|---|")
    print(f"| {concurrency} × {size_mb} MB bad signature, {rounds} round(s) | {len(statuses)} | "
          f"{before / 1024:.0f} | {after / 1024:.0f} | {peak / 1024:.0f} | "
          f"{peak / before:.2f}× |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--size-mb", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    main(args.concurrency, args.size_mb, args.rounds)
