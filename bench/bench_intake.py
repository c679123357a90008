"""Webhook intake: the real `serve` versus an app that only verifies the HMAC.

N signed `pull_request.synchronize` deliveries (the vendored real payload, a unique
X-GitHub-Delivery each; 5,000 by default) are sent at concurrency 64 by a load
generator in its own process (aiohttp client, the same for every target):

  serve      `python -m bot.cli.serve` with its workers paused (CI_STABILITY_WORKERS=0),
             so what is measured is intake: verify, scan, group-commit into SQLite, 202
  minimal    an aiohttp app that verifies X-Hub-Signature-256 and answers 202
  sustained  both again with --sustained deliveries (30,000), a longer steady load

serve and minimal are run --repeat times (3), interleaved, and reported as medians:
this machine's speed drifts between runs.

Durability is checked while the server still runs: the moment the burst ends, every
acknowledged id must be committed in the database (read by this process, not the
server). The server's CPU is sampled by the generator at the first request and the
moment the last response is in; the whole machine's (/proc/stat: both processes, the
kernel's network stack, anything else running) over the same span.

Run: `.venv/bin/python bench/bench_intake.py [--n 5000] [--concurrency 64] [--sustained N]
[--repeat K]`. Writes bench/RESULTS-intake.md and bench/out/intake.json
(`--report-only` rewrites the former from the latter).
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
COST_BATCH = 64  # rows per transaction in the solo insert cost (≈ one batch at concurrency 64)


# --- the HMAC-only server ------------------------------------------------------------
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
def run_generator(url: str, n: int, concurrency: int, server_pid: int) -> None:
    asyncio.run(_generate(url, n, concurrency, server_pid))


async def _generate(url: str, n: int, concurrency: int, server_pid: int) -> None:
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
        server_cpu_began, machine_began = _cpu_seconds(server_pid), _machine_ticks()
        began = time.perf_counter()
        await asyncio.gather(*(client(session) for _ in range(concurrency)))
        elapsed = time.perf_counter() - began
        server_cpu = _cpu_seconds(server_pid) - server_cpu_began
        machine_ticks = [b - a for a, b in zip(machine_began, _machine_ticks(), strict=True)]
    latencies.sort()
    busy, idle, steal = _split_ticks(machine_ticks)
    print(json.dumps({
        "requests": n, "seconds": elapsed, "rps": n / elapsed,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "statuses": statuses, "ids": ids, "client_cpu_s": time.process_time() - cpu_began,
        "server_cpu_s": server_cpu,
        "machine_cpu_us_per_request": 1e6 * busy / os.sysconf("SC_CLK_TCK") / n,
        "machine_busy_pct": 100 * busy / max(1, busy + idle + steal),
        "steal_pct": 100 * steal / max(1, busy + idle + steal),
    }))


def _machine_ticks() -> list[int]:
    """The aggregate `cpu` line of /proc/stat: user nice system idle iowait irq softirq steal."""
    with open("/proc/stat") as stat:
        return [int(x) for x in stat.readline().split()[1:9]]


def _split_ticks(ticks: list[int]) -> tuple[int, int, int]:
    user, nice, system, idle, iowait, irq, softirq, steal = ticks
    return user + nice + system + irq + softirq, idle + iowait, steal


# --- orchestration -------------------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start(argv: list[str], env: dict[str, str],
           log_path: Path) -> tuple[subprocess.Popen[bytes], int]:
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
    log_path = work / f"{name}.log"
    proc, port = _start(argv, env, log_path)
    try:
        generated = subprocess.run(
            [sys.executable, __file__, "--generate", f"http://127.0.0.1:{port}/webhook",
             "--n", str(n), "--concurrency", str(concurrency), "--server-pid", str(proc.pid)],
            check=True, capture_output=True, cwd=ROOT,
        )
        result: dict[str, Any] = json.loads(generated.stdout)
        ids = set(result.pop("ids"))
        if db is not None:
            result["committed"] = _committed(db, ids)
            if result["committed"] < result["statuses"].get("202", 0):
                raise SystemExit(f"{name}: acknowledged deliveries are missing: {result}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    if db is not None:
        result["rows_per_transaction"] = _rows_per_transaction(log_path)
    result["server_cpu_us_per_request"] = 1e6 * result.pop("server_cpu_s") / n
    result["client_cpu_us_per_request"] = 1e6 * result.pop("client_cpu_s") / n
    print(f"{name:<20} {result['rps']:7.0f} req/s  p50 {result['p50_ms']:5.1f} ms  "
          f"p99 {result['p99_ms']:5.1f} ms  server {result['server_cpu_us_per_request']:4.0f}"
          f"  client {result['client_cpu_us_per_request']:4.0f}  machine "
          f"{result['machine_cpu_us_per_request']:4.0f} us/req  busy "
          f"{result['machine_busy_pct']:3.0f}%  steal {result['steal_pct']:3.0f}%"
          + (f"  committed {result['committed']}/{n}, "
             f"{result['rows_per_transaction']:.1f} rows/txn" if db else ""), flush=True)
    return result


def _committed(db: Path, ids: set[str]) -> int:
    """Acknowledged ids committed, as another process sees them while the server runs."""
    with sqlite3.connect(db) as conn:
        stored = {row[0] for row in conn.execute("SELECT id FROM deliveries")}
    return len(ids & stored)


def _rows_per_transaction(log_path: Path) -> float:
    """From the server's shutdown line (GroupCommitter.stats()); NaN if it is missing."""
    for line in log_path.read_text(errors="replace").splitlines():
        if '"intake closed"' in line:
            entry = json.loads(line)
            return float(entry["deliveries_committed"]) / max(1, int(entry["transactions"]))
    return float("nan")


def measure_costs() -> dict[str, float]:
    """Per-operation CPU cost (µs) of the steps intake adds to the HMAC-only app,
    measured alone here, so lower than inside a loaded server."""
    import hashlib
    import hmac
    import io
    import logging
    import zlib

    import orjson

    from bot.app.jsonlog import JsonFormatter
    from bot.store import NewDelivery, connect
    from bot.store.delivery_fields import scan_prefix, scan_pull_request

    body = PAYLOAD.read_bytes()
    costs: dict[str, float] = {}

    def per_call(name: str, fn: Any, repeat: int = 2000) -> None:
        start = time.process_time()
        for _ in range(repeat):
            fn()
        costs[name] = 1e6 * (time.process_time() - start) / repeat

    per_call("HMAC-SHA256 of the body (both apps)",
             lambda: hmac.new(b"k", body, hashlib.sha256).hexdigest())
    per_call("json.loads (the worker's fallback)", lambda: json.loads(body))
    per_call("orjson.loads (the worker; no longer at intake)", lambda: orjson.loads(body))
    prefix = scan_prefix(body)
    assert prefix is not None
    per_call("fast scan: action + number (anchored prefix)", lambda: scan_prefix(body))
    per_call("fast scan: repository + head SHA", lambda: scan_pull_request(body, prefix))
    per_call("zlib.compress level 1", lambda: zlib.compress(body, 1))
    logger = logging.getLogger("bench.cost")
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(JsonFormatter([SECRET]))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    context = {"delivery_id": str(uuid.uuid4()), "event": "pull_request",
               "action": "synchronize", "repo": "o/r", "pr": 1, "head_sha": "a" * 40}
    per_call("one JSON log line (extra=, to memory)",
             lambda: logger.info("delivery queued", extra=context))
    store = connect(Path(tempfile.mkdtemp(prefix="bench-costs-")) / "costs.db")
    deliveries = [NewDelivery(str(uuid.uuid4()), "pull_request", "synchronize",
                              bytes(bytearray(body)), 0.0, 0.0, "o/r#1") for _ in range(4096)]
    start = time.process_time()
    for i in range(0, len(deliveries), COST_BATCH):  # a fresh 28 kB object each
        store.add_deliveries(deliveries[i:i + COST_BATCH])
    costs[f"group commit per row: zlib + INSERT ({COST_BATCH}-row transactions)"] = (
        1e6 * (time.process_time() - start) / len(deliveries))
    store.close()
    return costs


LOADAVG_AT_START = " ".join(Path("/proc/loadavg").read_text().split()[:3])


def orchestrate(n: int, concurrency: int, sustained: int, repeat: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-intake-"))
    key = work / "app.pem"
    _write_key(key)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_STAB"))}

    def serve_env(db: Path) -> dict[str, str]:
        return {**base_env, "GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY_PATH": str(key),
                "GITHUB_WEBHOOK_SECRET": SECRET, "CI_STABILITY_DB": str(db),
                "CI_STABILITY_WORKERS": "0", "PYTHONPATH": str(ROOT),
                # No GitHub here: GET /app fails at once; no metrics listener.
                "GITHUB_API_URL": "http://127.0.0.1:9", "METRICS_PORT": "off"}

    py = sys.executable
    serve_argv = [py, "-m", "bot.cli.serve", "--host", "127.0.0.1", "--port", "0"]
    minimal_argv = [py, __file__, "--minimal-server"]
    # This guest's speed drifts from run to run, so the comparison that the ratio rests
    # on is repeated, interleaved, and reported as medians.
    trials: dict[str, list[dict[str, Any]]] = {}
    for t in range(repeat):
        db = work / f"serve-{t}.db"
        trials.setdefault("serve", []).append(_measure(
            f"serve#{t}", serve_argv, serve_env(db), db, n, concurrency, work))
        trials.setdefault("minimal", []).append(_measure(
            f"minimal#{t}", minimal_argv, base_env, None, n, concurrency, work))
    runs = {name: _median_run(results) for name, results in trials.items()}
    ratios = [s["rps"] / m["rps"] for s, m in zip(trials["serve"], trials["minimal"],
                                                    strict=True)]
    if sustained:
        db = work / "sustained.db"
        runs[f"serve, {sustained:,} deliveries"] = _measure(
            "serve-sustained", serve_argv, serve_env(db), db, sustained, concurrency, work)
        runs[f"minimal, {sustained:,} deliveries"] = _measure(
            "minimal-sustained", minimal_argv, base_env, None, sustained, concurrency, work)
    costs = measure_costs()
    meta = {"n": n, "concurrency": concurrency, "sustained": sustained, "repeat": repeat,
            "machine": machine(), "date": time.strftime("%Y-%m-%d"),
            "loadavg": LOADAVG_AT_START}
    report = {"meta": meta, "runs": runs, "trials": trials, "ratios": ratios,
              "costs_us": costs}
    OUT.mkdir(exist_ok=True)
    (OUT / "intake.json").write_text(json.dumps(report, indent=2))
    write_results(report)


def _median_run(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the trials (statuses summed)."""
    merged: dict[str, Any] = {}
    for key, value in results[0].items():
        if key == "statuses":
            merged[key] = {}
            for r in results:
                for status, count in r[key].items():
                    merged[key][status] = merged[key].get(status, 0) + count
        elif isinstance(value, int | float) and not isinstance(value, bool):
            merged[key] = statistics.median(r[key] for r in results)
        else:
            merged[key] = value
    merged["requests"] = results[0]["requests"]
    return merged


def _write_key(path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.TraditionalOpenSSL,
                                       serialization.NoEncryption()))


def write_results(report: dict[str, Any]) -> None:
    """RESULTS-intake.md from one run's figures (as saved in bench/out/intake.json)."""
    runs: dict[str, dict[str, Any]] = report["runs"]
    costs: dict[str, float] = report["costs_us"]
    meta = report["meta"]
    n, sustained = meta["n"], meta["sustained"]
    def row(name: str, r: dict[str, Any]) -> str:
        extra = (f"{r['committed']:.0f} / {r['requests']} | {r['rows_per_transaction']:.1f}"
                 if "committed" in r else "— | —")
        statuses = ", ".join(f"{k}×{v}" for k, v in sorted(r["statuses"].items()))
        return (f"| {name} | {r['requests']} | {r['rps']:.0f} | {r['p50_ms']:.1f} | "
                f"{r['p99_ms']:.1f} | {r['server_cpu_us_per_request']:.0f} | "
                f"{r['client_cpu_us_per_request']:.0f} | {r['machine_cpu_us_per_request']:.0f}"
                f" | {r['machine_busy_pct']:.0f}% | {r['steal_pct']:.0f}% | {extra} |"
                f" {statuses} |")

    serve, minimal = runs["serve"], runs["minimal"]
    ratio = serve["rps"] / minimal["rps"]
    sustained_ratio = ""
    if sustained:
        s_serve = runs[f"serve, {sustained:,} deliveries"]
        s_minimal = runs[f"minimal, {sustained:,} deliveries"]
        sustained_ratio = (f"; over {sustained:,} deliveries: "
                           f"**{s_serve['rps'] / s_minimal['rps']:.2f}**")
    options = (f"--n {n} --concurrency {meta['concurrency']} --sustained {sustained}"
               f" --repeat {meta['repeat']}")
    RESULTS.write_text(RESULTS_TEMPLATE.format(
        **meta, options=options,
        header=TABLE_HEADER, rows="\n".join(row(name, r) for name, r in runs.items()),
        ratio=ratio, sustained_ratio=sustained_ratio,
        trial_ratios=", ".join(f"{r:.2f}" for r in report["ratios"]),
        verdict="meets" if ratio >= 0.8 else "misses",
        cost_rows="\n".join(f"| {name} | {us:.1f} |" for name, us in costs.items()),
        intake_steps=sum(us for name, us in costs.items() if name.startswith(INTAKE_STEPS)),
        serve_rps=serve["rps"], minimal_rps=minimal["rps"],
        serve_cpu=serve["server_cpu_us_per_request"],
        minimal_cpu=minimal["server_cpu_us_per_request"],
        minimal_client=minimal["client_cpu_us_per_request"],
        serve_core=serve["server_cpu_us_per_request"] * serve["rps"] / 1e6,
        generator_core=minimal["client_cpu_us_per_request"] * minimal["rps"] / 1e6,
        target_rps=0.8 * minimal["rps"], budget=1e6 / (0.8 * minimal["rps"]),
        budget_over=1e6 / (0.8 * minimal["rps"]) - minimal["server_cpu_us_per_request"],
        serve_over=serve["server_cpu_us_per_request"] - minimal["server_cpu_us_per_request"],
        serve_busy=serve["machine_busy_pct"], steal=serve["steal_pct"],
        batch=serve["rows_per_transaction"],
    ))
    print(f"ratio serve/minimal = {ratio:.2f} (target >= 0.8){sustained_ratio}; wrote {RESULTS}")


# The steps `serve` adds to the HMAC-only app, by their names in measure_costs().
INTAKE_STEPS = ("fast scan", "one JSON log line", "group commit per row")
TABLE_HEADER = (
    "| target | deliveries | req/s | p50 ms | p99 ms | server CPU µs/req | client CPU µs/req"
    " | machine CPU µs/req | machine busy | steal | committed / sent | rows per transaction"
    " | statuses |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)
RESULTS_TEMPLATE = """# Webhook intake benchmark

Command: `.venv/bin/python bench/bench_intake.py {options}`. Machine: {machine}, a
KVM guest whose speed drifts between runs; the load generator and the server share its
two cores. Run on {date}; load average just before: {loadavg}.

{n} signed `pull_request.synchronize` deliveries (the vendored real payload, 28 kB, a
unique `X-GitHub-Delivery` each) at concurrency {concurrency}, from the same load generator
process (aiohttp client) for every row. `serve` is `python -m bot.cli.serve` with its
workers paused (`CI_STABILITY_WORKERS=0`), so intake alone is measured; `minimal` is an
aiohttp app that only verifies `X-Hub-Signature-256` and answers 202. The first two rows
are medians of {repeat} interleaved runs (statuses summed), the rest single runs.

Latency = request sent → response read, seen by the generator. Server / client CPU =
user+system time of that process from the first request to the last response, per
request. Machine CPU = all non-idle time of both cores over the same span (/proc/stat:
both processes, the kernel's loopback TCP, anything else), per request; machine busy =
that share of the two cores; steal = time the hypervisor gave to other guests.
"committed / sent" = acknowledged deliveries found committed by a separate SQLite
connection the moment the burst ended, while the server still ran (the run aborts if
one is missing); rows per transaction = `GroupCommitter.stats()` from the server's
shutdown log line.

{header}
{rows}

**Throughput ratio serve / minimal, burst of {n}: {ratio:.2f}** (median; the {repeat} runs:
{trial_ratios}; target ≥ 0.8: {verdict}){sustained_ratio}.

## What is durable when the 202 goes out

Intake group-commits: every delivery that arrives in one event-loop iteration goes into
one SQLite transaction (`GroupCommitter`, {batch:.1f} rows per transaction on average in
the burst above), and each request's `202` is sent only after the transaction holding its
delivery committed. The database runs in WAL mode with `synchronous=NORMAL`: a committed
transaction survives the process dying — kill -9, OOM kill, a crash
(tests/app/test_serve.py kills `serve` mid-delivery and restarts it) — but the last
transactions can be lost if the machine loses power or the kernel crashes before the WAL
is synced. `synchronous=FULL` would close that gap at one fsync per group commit.

## Why the 0.8 target is missed

The two apps run into different limits. `minimal` spends {minimal_cpu:.0f} µs of CPU per
request; at its {minimal_rps:,.0f} req/s the load generator ({minimal_client:.0f} µs per request)
is the process using a full core ({generator_core:.0%}), so the HMAC-only app is measured at
the generator's limit. `serve` is one event loop spending {serve_cpu:.0f} µs per request: at
{serve_rps:,.0f} req/s that is {serve_core:.0%} of a core, so it is bound by its own CPU per
request. 0.8× the minimal app's rate is {target_rps:,.0f} req/s, which leaves at most
{budget:.0f} µs of CPU per request on one core, about {budget_over:.0f} µs more than the
minimal app. The steps intake cannot skip take {intake_steps:.0f} µs even measured alone
(table below: the fast scan, one JSON log line, zlib + INSERT in a group commit), before
the metrics, the response and the futures, and cost more inside the loaded server, where
`serve` spends {serve_over:.0f} µs more than the minimal app. With two cores shared with the
generator there is no idle core to add (a second intake process on SO_REUSEPORT would
take CPU from the generator); the machine was {serve_busy:.0f}% busy during the `serve`
bursts, steal {steal:.0f}%.

## Tried and dropped: an append-only intake journal

Commit e5c27d8 appended each delivery to a CRC-checked journal file (one `writev`) and
answered 202 at once, draining into SQLite in the background. Measured on 2026-11-29 on
this machine (5,000 deliveries, median of 3): burst ratio 0.48 against 0.49 for the same
code with group commit; 254 µs of server CPU per delivery including the drain against
192 µs for group commit (~30% more); over 30,000 deliveries, where the drain ran during
intake, 2,397 req/s against 5,095 for group commit. (The minimal app ran at 6,444 req/s
that day, against {minimal_rps:,.0f} here, so those ratios compare with each other, not with
the ones above.) Its durability was the same as a WAL commit with `synchronous=NORMAL`
(written to the page cache, no fsync), so it was removed as complexity without a gain.

## Where the time goes (CPU µs per operation, measured alone by the same script)

| step | µs |
|---|---|
{cost_rows}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--sustained", type=int, default=30000, metavar="N",
                        help="also run both targets with N deliveries (0: skip)")
    parser.add_argument("--repeat", type=int, default=3, metavar="K",
                        help="burst runs per target, interleaved; medians reported")
    parser.add_argument("--report-only", action="store_true",
                        help="rewrite RESULTS-intake.md from bench/out/intake.json, no run")
    parser.add_argument("--generate", metavar="URL")
    parser.add_argument("--server-pid", type=int, default=0)
    parser.add_argument("--minimal-server", action="store_true")
    args = parser.parse_args()
    if args.generate:
        run_generator(args.generate, args.n, args.concurrency, args.server_pid)
    elif args.minimal_server:
        run_minimal_server()
    elif args.report_only:
        write_results(json.loads((OUT / "intake.json").read_text()))
    else:
        orchestrate(args.n, args.concurrency, args.sustained, max(1, args.repeat))


if __name__ == "__main__":
    main()
