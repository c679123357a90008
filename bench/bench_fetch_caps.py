"""Memory of reviewing a huge PR in the App, with the default caps vs a 300-file cap.

The fake GitHub runs in this process, a fresh one holding only the PR for each review;
each review runs in a fresh child process with the App's real client stack (JWT →
installation token → gidgethub `AsyncDriver`) and `review_pull_request`, publishing like
the App, and reports its own peak RSS (VmHWM) and the API calls it made. The PR has
FILES modified in-scope workflow files of LINES lines each: texts are fetched, bases
rebuilt. Same PR content, same run, so the ratio compares the caps only.

Run: `.venv/bin/python bench/bench_fetch_caps.py [--files 3000 --lines 150 --cap 300]`
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
from gidgethub.aiohttp import GitHubAPI

from bench.common import machine
from bot.core.limits import DEFAULT_LIMITS, ReviewLimits
from bot.github.auth import AppAuth
from bot.github.calls import CallCounter
from bot.github.drive_async import AsyncDriver
from bot.github.review import ReviewRequest, review_pull_request
from rules import ALL_RULES, option_specs
from tests.github.kit import APP_ID, BOT, INSTALLATION, NAME, OWNER, app_keys, new_fake, push

_KEY_ENV = "BENCH_APP_PRIVATE_KEY"


def _peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM, not `ru_maxrss`: Linux carries the latter over
    `exec` from the forked parent, here the process holding the fake GitHub."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _child(url: str, number: int, max_files: int) -> dict[str, object]:
    """One review as the App runs it; this process's peak RSS afterwards."""
    async with aiohttp.ClientSession() as session:
        auth = AppAuth(APP_ID, os.environ[_KEY_ENV])
        token = await auth.installation_token(
            GitHubAPI(session, "bench", base_url=url), INSTALLATION)
        counter = CallCounter()
        driver = AsyncDriver(session, token, base_url=url, counter=counter, write_spacing=0,
                             timeout=aiohttp.ClientTimeout(total=600))
        request = ReviewRequest(
            OWNER, NAME, number, rules=ALL_RULES, option_specs=option_specs(),
            bot_login=BOT, force=True,
            limits=ReviewLimits(max_files, DEFAULT_LIMITS.max_bytes))
        start = time.perf_counter()
        outcome = await driver.run(review_pull_request(request, None))
        took = time.perf_counter() - start
    report = outcome.report
    assert report is not None
    return {"rss_mb": _peak_rss_mb(),
            "calls": counter.total, "seconds": took, "files_total": report.files_total,
            "reviewed": report.files_in_scope,
            "capped": any("Review capped" in e.message for e in report.errors)}


def _pr(fake: object, number: int, files: int, lines: int) -> None:
    texts = {}
    for i in range(files):
        base = "".join(f"# step {j}: keep the runners warm ({i})\n" for j in range(lines))
        head = base.replace("# step 3:", "# step 3 (changed):", 1)
        texts[f".github/workflows/w{i:04}.yml"] = (base, head)
    push(fake, number, texts, tag=f"big{number}")  # type: ignore[arg-type]


async def _measure(files: int, lines: int, max_files: int) -> dict[str, object]:
    """One review in a child process, on a fresh fake GitHub holding only this PR."""
    fake = new_fake()
    await fake.start()
    try:
        _pr(fake, 1, files, lines)
        child = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--child", fake.url, "1", str(max_files),
            stdout=asyncio.subprocess.PIPE, env={**os.environ, _KEY_ENV: app_keys()[0]})
        out, _ = await child.communicate()
        assert child.returncode == 0, out
        assert fake.violations == []
        return dict(json.loads(out.decode().strip().splitlines()[-1]))
    finally:
        await fake.close()


async def main(files: int, lines: int, cap: int) -> None:
    rows = [(name, await _measure(files, lines, max_files)) for name, max_files in (
        ("default caps (3,000 files, 64 MiB)", DEFAULT_LIMITS.max_files),
        (f"cap of {cap} files", cap))]
    base = rows[0][1]
    print(f"machine: {machine()}; PR: {files} modified workflow files x {lines} lines")
    print("| review | peak RSS MB | × default | API calls | × default | review s | "
          "files reviewed | capped |")
    print("|---|---|---|---|---|---|---|---|")
    for name, row in rows:
        print(f"| {name} | {row['rss_mb']:.0f} | {row['rss_mb'] / base['rss_mb']:.2f} | "  # type: ignore[operator]
              f"{row['calls']} | {row['calls'] / base['calls']:.2f} | "  # type: ignore[operator]
              f"{row['seconds']:.1f} | {row['reviewed']} of {row['files_total']} | "
              f"{row['capped']} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        url, number, max_files = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        print(json.dumps(asyncio.run(_child(url, number, max_files))))
        sys.exit(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--lines", type=int, default=150)
    parser.add_argument("--cap", type=int, default=300)
    args = parser.parse_args()
    asyncio.run(main(args.files, args.lines, args.cap))
