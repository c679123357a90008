"""Webhook intake: the real `serve` versus an app that only verifies the HMAC.

5,000 signed `pull_request.synchronize` deliveries (the vendored real payload, a
unique X-GitHub-Delivery each) are sent at concurrency 64 by a load generator in its
own process (aiohttp client, same generator for every target), one run per target:

  serve     `python -m bot.cli_serve` with its workers paused (CI_STABILITY_WORKERS=0),
            so what is measured is intake: verify, parse, group-commit to SQLite, 202
  minimal   an aiohttp app that verifies X-Hub-Signature-256 and answers 202
  variants  (informational) the same web app wired here with synchronous=FULL and/or
            the group commit on a writer thread instead of the event loop

After each `serve`-like run, while the server is still up, another connection counts
the rows: every acknowledged delivery must already be committed.

Run: `.venv/bin/python bench/bench_intake.py [--n 5000] [--concurrency 64] [--no-variants]`
Writes bench/RESULTS-intake.md and bench/out/intake.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import OUT, machine  # noqa: E402

PAYLOAD = ROOT / "tests/data/github/webhooks/pull_request.synchronize.json"
SECRET = "bench-intake-secret"
RESULTS = Path(__file__).parent / "RESULTS-intake.md"


# --- servers ------------------------------------------------------------------------
def run_minimal_server() -> None:
    import hashlib
    import hmac

    from aiohttp import web

    secret = SECRET.encode()

    async def webhook(request: web.Request) -> web.Response:
        body = await request.read()
        expected = ("sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()).encode()
        given = request.headers.get("X-Hub-Signature-256", "").encode()
        if not hmac.compare_digest(expected, given):
            return web.Response(status=401)
        return web.Response(status=202)

    app = web.Application(client_max_size=25 * 1024 * 1024)
    app.router.add_post("/webhook", webhook)
    asyncio.run(_run_app(app))


def run_variant_server(db: str, synchronous: str, use_thread: bool) -> None:
    from aiohttp import web  # noqa: F401  (imported for parity with the other servers)

    from bot.jsonlog import configure_logging
    from bot.metrics import Metrics
    from bot.store import GroupCommitter, connect
    from bot.web import build_web_app

    configure_logging("INFO", secrets=[SECRET])  # as `serve` does
    store = connect(db, synchronous=synchronous)  # type: ignore[arg-type]
    app = build_web_app(SECRET, store, None, Metrics(),
                        committer=GroupCommitter(store, use_thread=use_thread))
    asyncio.run(_run_app(app))


async def _run_app(app: Any) -> None:
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    sys.stderr.write(json.dumps({"msg": "listening", "port": port}) + "\n")
    sys.stderr.flush()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await runner.cleanup()


# --- load generator ----------------------------------------------------------------------
def run_generator(url: str, n: int, concurrency: int) -> None:
    asyncio.run(_generate(url, n, concurrency))


async def _generate(url: str, n: int, concurrency: int) -> None:
    import hashlib
    import hmac

    import aiohttp

    body = PAYLOAD.read_bytes()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    ids = [str(uuid.uuid4()) for _ in range(n)]
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    next_index = 0

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal next_index
        while next_index < n:
            index = next_index
            next_index += 1
            headers = {
                "Content-Type": "application/json", "X-GitHub-Event": "pull_request",
                "X-GitHub-Delivery": ids[index], "X-Hub-Signature-256": signature,
            }
            start = time.perf_counter()
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
            latencies.append(time.perf_counter() - start)
            statuses[response.status] = statuses.get(response.status, 0) + 1

    connector = aiohttp.TCPConnector(limit=concurrency)
    cpu_began = time.process_time()
    async with aiohttp.ClientSession(connector=connector) as session:
        began = time.perf_counter()
        await asyncio.gather(*(client(session) for _ in range(concurrency)))
        elapsed = time.perf_counter() - began
    latencies.sort()
    print(json.dumps({
        "requests": n, "seconds": elapsed, "rps": n / elapsed,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "statuses": statuses, "ids": ids, "client_cpu_s": time.process_time() - cpu_began,
    }))


# --- orchestration -------------------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start(argv: list[str], env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen[bytes],
                                                                            int]:
    log = open(log_path, "wb")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in log_path.read_text(errors="replace").splitlines():
            if '"listening"' in line:
                return proc, int(json.loads(line)["port"])
        if proc.poll() is not None:
            raise SystemExit(f"server exited early; see {log_path}")
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"server did not start; see {log_path}")


def _measure(name: str, argv: list[str], env: dict[str, str], db: Path | None,
             n: int, concurrency: int, work: Path) -> dict[str, Any]:
    proc, port = _start(argv, env, work / f"{name}.log")
    try:
        cpu_before = _cpu_seconds(proc.pid)
        generated = subprocess.run(
            [sys.executable, __file__, "--generate", f"http://127.0.0.1:{port}/webhook",
             "--n", str(n), "--concurrency", str(concurrency)],
            check=True, capture_output=True, cwd=ROOT,
        )
        cpu = _cpu_seconds(proc.pid) - cpu_before
        result: dict[str, Any] = json.loads(generated.stdout)
        ids = set(result.pop("ids"))
        if db is not None:  # counted by another connection while the server still runs
            with sqlite3.connect(db) as conn:
                stored = {row[0] for row in conn.execute("SELECT id FROM deliveries")}
            result["stored"] = len(ids & stored)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    result["server_cpu_us_per_request"] = 1e6 * cpu / n
    result["client_cpu_us_per_request"] = 1e6 * result.pop("client_cpu_s") / n
    print(f"{name:<28} {result['rps']:8.0f} req/s  p50 {result['p50_ms']:6.1f} ms  "
          f"p99 {result['p99_ms']:6.1f} ms  cpu {result['server_cpu_us_per_request']:5.0f} us/req"
          f"  client {result['client_cpu_us_per_request']:5.0f} us/req"
          + (f"  stored {result['stored']}/{n}" if "stored" in result else ""), flush=True)
    return result


def measure_costs() -> dict[str, float]:
    """Per-operation CPU cost (µs) of the steps intake adds to the HMAC-only app."""
    import hashlib
    import hmac
    import io
    import logging
    import zlib

    import bot.store.sqlite as sqlite_store
    from bot.jsonlog import JsonFormatter, log_context
    from bot.store import NewDelivery, connect

    body = PAYLOAD.read_bytes()
    costs: dict[str, float] = {}

    def per_call(name: str, fn: Any, repeat: int = 2000) -> None:
        start = time.process_time()
        for _ in range(repeat):
            fn()
        costs[name] = 1e6 * (time.process_time() - start) / repeat

    per_call("HMAC-SHA256 of the body (both apps)",
             lambda: hmac.new(b"k", body, hashlib.sha256).hexdigest())
    per_call("json.loads", lambda: json.loads(body))
    try:
        import orjson

        per_call("orjson.loads (used)", lambda: orjson.loads(body))
    except ImportError:
        pass
    per_call("zlib.compress level 1", lambda: zlib.compress(body, 1))
    logger = logging.getLogger("bench.cost")
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(JsonFormatter([SECRET]))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    with log_context(delivery_id="x", event="pull_request", repo="o/r", pr=1, head_sha="a" * 40):
        per_call("one JSON log line", lambda: logger.info("delivery queued"))
    work = Path(tempfile.mkdtemp(prefix="bench-costs-"))
    for label, threshold in (("compressed (zlib included)", 1024), ("raw 28 kB", 10**9)):
        sqlite_store.COMPRESS_OVER_BYTES = threshold
        store = connect(work / f"{threshold}.db")
        batches = [[NewDelivery(str(uuid.uuid4()), "pull_request", "synchronize", body, 0.0, 0.0)
                    for _ in range(64)] for _ in range(40)]
        start = time.process_time()
        for batch in batches:
            store.add_deliveries(batch)
        costs[f"SQLite insert per row, 64-row transactions, {label}"] = (
            1e6 * (time.process_time() - start) / (64 * 40))
        store.close()
    sqlite_store.COMPRESS_OVER_BYTES = 1024
    costs.update(asyncio.run(_claim_complete_costs(work / "calls.db")))
    return costs


async def _claim_complete_costs(db: Path) -> dict[str, float]:
    """A worker's claim + complete, called inline on the loop vs hopping to one thread."""
    from concurrent.futures import ThreadPoolExecutor

    from bot.store import connect

    store = connect(db)
    loop = asyncio.get_running_loop()
    executor = ThreadPoolExecutor(1)
    results = {}
    for label in ("inline", "thread"):
        for i in range(2000):  # the same backlog for both
            store.add_delivery(f"{label}{i}", "pull_request", "opened", b"{}", 0.0, 0.0, None)
        start = time.perf_counter()
        for _ in range(2000):
            if label == "inline":
                d = store.claim(1.0)
                assert d is not None
                store.complete(d.id)
            else:
                d = await loop.run_in_executor(executor, store.claim, 1.0)
                assert d is not None
                await loop.run_in_executor(executor, store.complete, d.id)
        results[f"claim + complete from the event loop, {label} (wall)"] = (
            1e6 * (time.perf_counter() - start) / 2000)
    executor.shutdown()
    store.close()
    return results


LOADAVG_AT_START = " ".join(Path("/proc/loadavg").read_text().split()[:3])


def orchestrate(n: int, concurrency: int, variants: bool) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-intake-"))
    key = work / "app.pem"
    _write_key(key)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_STAB"))}
    serve_env = {**base_env, "GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY_PATH": str(key),
                 "GITHUB_WEBHOOK_SECRET": SECRET, "CI_STABILITY_DB": str(work / "serve.db"),
                 "CI_STABILITY_WORKERS": "0", "PYTHONPATH": str(ROOT)}
    py = sys.executable
    runs: dict[str, dict[str, Any]] = {}
    runs["serve"] = _measure("serve", [py, "-m", "bot.cli_serve", "--host", "127.0.0.1",
                                       "--port", "0"], serve_env, work / "serve.db",
                             n, concurrency, work)
    runs["minimal"] = _measure("minimal", [py, __file__, "--minimal-server"], base_env, None,
                               n, concurrency, work)
    if variants:
        for sync, thread in (("FULL", False), ("NORMAL", True), ("FULL", True)):
            name = f"app sync={sync} {'thread' if thread else 'inline'}"
            db = work / f"{sync}-{thread}.db"
            argv = [py, __file__, "--variant-server", str(db), sync] + (["--thread"] if thread
                                                                        else [])
            runs[name] = _measure(name, argv, {**base_env, "PYTHONPATH": str(ROOT)}, db,
                                  n, concurrency, work)
    costs = measure_costs()
    OUT.mkdir(exist_ok=True)
    (OUT / "intake.json").write_text(json.dumps({"runs": runs, "costs_us": costs}, indent=2))
    _write_results(runs, costs, n, concurrency)


def _write_key(path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.TraditionalOpenSSL,
                                       serialization.NoEncryption()))


def _write_results(runs: dict[str, dict[str, Any]], costs: dict[str, float], n: int,
                   concurrency: int) -> None:
    serve, minimal = runs["serve"], runs["minimal"]
    ratio = serve["rps"] / minimal["rps"]
    rows = "\n".join(
        f"| {name} | {r['rps']:.0f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
        f"{r['server_cpu_us_per_request']:.0f} | {r['client_cpu_us_per_request']:.0f} | "
        f"{r.get('stored', '—')} | "
        f"{', '.join(f'{k}×{v}' for k, v in sorted(r['statuses'].items()))} |"
        for name, r in runs.items()
    )
    cost_rows = "\n".join(f"| {name} | {us:.1f} |" for name, us in costs.items())
    RESULTS.write_text(RESULTS_TEMPLATE.format(
        machine=machine(), n=n, concurrency=concurrency, rows=rows, ratio=ratio,
        cost_rows=cost_rows, analysis=_analysis(runs, costs),
        verdict="meets" if ratio >= 0.8 else "misses",
        date=time.strftime("%Y-%m-%d"), loadavg=LOADAVG_AT_START,
    ))
    print(f"ratio serve/minimal = {ratio:.2f} (target >= 0.8); wrote {RESULTS}")


def _analysis(runs: dict[str, dict[str, Any]], costs: dict[str, float]) -> str:
    minimal = runs["minimal"]["server_cpu_us_per_request"]
    serve = runs["serve"]["server_cpu_us_per_request"]
    added = sum(us for name, us in costs.items() if name.startswith(
        ("orjson", "one JSON log", "SQLite insert per row, 64-row transactions, comp")))
    inline = costs.get("claim + complete from the event loop, inline (wall)", 0.0)
    thread_rps = runs.get("app sync=NORMAL thread", {}).get("rps", float("nan"))
    thread = costs.get("claim + complete from the event loop, thread (wall)", 0.0)
    return (
        f"The HMAC-only app costs {minimal:.0f} µs of server CPU per request; `serve` costs "
        f"{serve:.0f} µs. Parsing (orjson), compressing, inserting and logging one delivery "
        f"add {added:.0f} µs by the table above, more than the minimal app's whole request, "
        f"and the rest is the per-request Python around them (response JSON, metrics, "
        f"futures) plus WAL checkpoints. With the load generator on the other core, a "
        f"single event loop cannot get `serve` near 0.8× of a handler that only hashes the "
        f"body: even at zero overhead the bound is about "
        f"{minimal / (minimal + added):.2f}×. Compressing before the insert (zlib level 1, "
        f"28 kB → 3.7 kB) costs less than writing the raw row, whose 7 overflow pages SQLite "
        f"writes to the WAL and again at checkpoint.\n\n"
        f"Store calls from asyncio: a claim + complete made inline on the loop took "
        f"{inline:.0f} µs wall, through a dedicated thread {thread:.0f} µs"
        f"{' (so the store is called inline: short transactions)' if inline <= thread else ''}"
        f". Group commit on the loop (`serve`) ran at {runs['serve']['rps']:.0f} req/s, on a "
        f"writer thread (same store settings) at {thread_rps:.0f} req/s.\n\n"
        f"Not tried, for the record: lz4 instead of zlib (8 µs instead of ~34 µs here, a new "
        f"dependency), skipping the JSON parse at intake (the filter and debounce key need "
        f"`action`, `repository.full_name` and `number`), several intake processes on "
        f"SO_REUSEPORT (the load generator already takes one of the two cores)."
    )


RESULTS_TEMPLATE = """# Webhook intake benchmark

Command: `.venv/bin/python bench/bench_intake.py --n {n} --concurrency {concurrency}`
Machine: {machine}; load generator and server share it. Run on {date}; load average
just before the run: {loadavg} (other work on the machine skews every row alike).

{n} signed `pull_request.synchronize` deliveries (the vendored real payload, 28 kB,
unique `X-GitHub-Delivery` each) at concurrency {concurrency}, one run per target,
same load generator process (aiohttp client). Latency = request sent → response read,
seen by the generator. Server CPU = user+system time of the server process / requests.
"stored" = acknowledged deliveries found committed by a separate SQLite connection
while the server was still running.

| target | req/s | p50 ms | p99 ms | server CPU µs/req | client CPU µs/req | stored | statuses |
|---|---|---|---|---|---|---|---|
{rows}

**Throughput ratio serve / minimal = {ratio:.2f}** (target ≥ 0.8: {verdict}).

`serve` = `python -m bot.cli_serve` with `CI_STABILITY_WORKERS=0` (workers paused, so
intake alone is measured), the default store (WAL, `synchronous=NORMAL`) and group
commit on the event loop. Each 202 is sent only after the transaction holding that
delivery committed. Under WAL with `synchronous=NORMAL` a commit is durable against the
process dying (kill -9 included; tests/app/test_serve.py) but not against power loss or
a kernel crash, which can drop the last transactions before the next WAL sync; the
`sync=FULL` rows show the cost of an fsync per (group) commit instead.

## Where the time goes (CPU µs per operation, measured by the same script)

| step | µs |
|---|---|
{cost_rows}

{analysis}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--no-variants", action="store_true")
    parser.add_argument("--generate", metavar="URL")
    parser.add_argument("--minimal-server", action="store_true")
    parser.add_argument("--variant-server", nargs=2, metavar=("DB", "SYNC"))
    parser.add_argument("--thread", action="store_true")
    args = parser.parse_args()
    if args.generate:
        run_generator(args.generate, args.n, args.concurrency)
    elif args.minimal_server:
        run_minimal_server()
    elif args.variant_server:
        run_variant_server(args.variant_server[0], args.variant_server[1], args.thread)
    else:
        orchestrate(args.n, args.concurrency, not args.no_variants)


if __name__ == "__main__":
    main()
