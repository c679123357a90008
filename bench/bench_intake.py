"""Webhook intake: the real `serve` versus an app that only verifies the HMAC.

N signed `pull_request.synchronize` deliveries (the vendored real payload, a unique
X-GitHub-Delivery each; 5,000 by default) are sent at concurrency 64 by a load
generator in its own process (aiohttp client, the same for every target):

  serve      `python -m bot.cli_serve` with its workers paused (CI_STABILITY_WORKERS=0),
             so what is measured is intake: verify, scan, append to the intake
             journal, 202; the journal drains into SQLite once the burst is over
  minimal    an aiohttp app that verifies X-Hub-Signature-256 and answers 202
  sustained  serve and minimal again with --sustained deliveries (30,000), long enough
             that the drain has to run during intake (DrainPolicy.max_delay/max_backlog)
  variants   (informational) the same web app wired here with the previous group commit
             (a committed SQLite row before each 202, no journal), and with the journal
             drained every 25 ms whether or not requests keep coming
  before     (with --before DIR) `serve` from another source tree, e.g. the previous
             commit, run in the same session for a like-for-like comparison

serve, minimal, the group-commit variant and before are run --repeat times (3),
interleaved, and reported as medians: this machine's speed drifts between runs.

Durability is checked while the server still runs: the moment the burst ends, every
acknowledged id must be in the journal or the database (read by this process, not
the server); then the database is polled until it holds them all ("drained after").
The server's CPU is sampled by the generator at the first request and the moment the
last response is in (burst CPU), and again once drained (CPU including the drain).

Run: `.venv/bin/python bench/bench_intake.py [--n 5000] [--concurrency 64] [--sustained N]
[--repeat K] [--no-variants] [--before DIR]`. Writes bench/RESULTS-intake.md and
bench/out/intake.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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


def run_variant_server(db: str, mode: str) -> None:
    from bot.cli_serve import lean_log_records
    from bot.jsonlog import configure_logging
    from bot.metrics import Metrics
    from bot.store import GroupCommitter, connect
    from bot.store.journal_intake import DrainPolicy
    from bot.web import build_web_app

    configure_logging("INFO", secrets=[SECRET])  # as `serve` does
    lean_log_records()
    store = connect(db)
    if mode == "group-commit":
        app = build_web_app(SECRET, store, None, Metrics(), committer=GroupCommitter(store))
    else:
        app = build_web_app(SECRET, store, None, Metrics(),
                            drain_policy=DrainPolicy(defer_while_busy=False))
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
        server_cpu_began = _cpu_seconds(server_pid)
        began = time.perf_counter()
        await asyncio.gather(*(client(session) for _ in range(concurrency)))
        elapsed = time.perf_counter() - began
        # Sampled here, the moment the last response is in: work the server does after
        # the burst (the journal drain) is measured separately.
        server_cpu = _cpu_seconds(server_pid) - server_cpu_began
    latencies.sort()
    print(json.dumps({
        "requests": n, "seconds": elapsed, "rps": n / elapsed,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "statuses": statuses, "ids": ids, "client_cpu_s": time.process_time() - cpu_began,
        "server_cpu_s": server_cpu, "server_cpu_at_start": server_cpu_began,
        "ended_at": time.time(),
    }))


# --- orchestration -------------------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start(argv: list[str], env: dict[str, str], log_path: Path,
           cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    log = open(log_path, "wb")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=log, cwd=cwd)
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
             n: int, concurrency: int, work: Path, cwd: Path = ROOT) -> dict[str, Any]:
    # `python -m` puts the working directory first on sys.path: it picks the source tree.
    proc, port = _start(argv, env, work / f"{name}.log", cwd)
    try:
        generated = subprocess.run(
            [sys.executable, __file__, "--generate", f"http://127.0.0.1:{port}/webhook",
             "--n", str(n), "--concurrency", str(concurrency), "--server-pid", str(proc.pid)],
            check=True, capture_output=True, cwd=ROOT,
        )
        result: dict[str, Any] = json.loads(generated.stdout)
        ids = set(result.pop("ids"))
        if db is not None:
            result.update(_durability(db, ids))
            if result["durable"] < result["statuses"].get("202", 0):
                raise SystemExit(f"{name}: acknowledged deliveries are missing: {result}")
            drained_at = _wait_drained(db, n)
            result["drained_after_s"] = max(0.0, drained_at - result["ended_at"])
            result["cpu_incl_drain_us_per_request"] = 1e6 * (
                _cpu_seconds(proc.pid) - result["server_cpu_at_start"]) / n
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    result["server_cpu_us_per_request"] = 1e6 * result.pop("server_cpu_s") / n
    result["client_cpu_us_per_request"] = 1e6 * result.pop("client_cpu_s") / n
    print(f"{name:<34} {result['rps']:7.0f} req/s  p50 {result['p50_ms']:5.1f} ms  "
          f"p99 {result['p99_ms']:5.1f} ms  cpu {result['server_cpu_us_per_request']:4.0f} us/req"
          f"  client {result['client_cpu_us_per_request']:4.0f} us/req"
          + (f"  durable {result['durable']}/{n} (sqlite {result['in_sqlite_at_end']}),"
             f" drained +{result['drained_after_s']:.2f} s, cpu incl. drain "
             f"{result['cpu_incl_drain_us_per_request']:.0f} us/req" if db else ""),
          flush=True)
    return result


def _durability(db: Path, ids: set[str]) -> dict[str, int]:
    """Acknowledged ids in the journal or the table, as another process sees them. The
    journal is read first: a record drained meanwhile is in the table by then."""
    from bot.store.journal import journal_dir, read_segment, segments

    journaled: set[str] = set()
    directory = journal_dir(str(db))
    for segment in segments(directory) if directory else []:
        # Drained and deleted in between: its rows are committed, so the table has them.
        with contextlib.suppress(FileNotFoundError):
            journaled.update(r.delivery_id for r in read_segment(segment)[0])
    with sqlite3.connect(db) as conn:
        stored = {row[0] for row in conn.execute("SELECT id FROM deliveries")}
    return {"durable": len(ids & (journaled | stored)), "in_sqlite_at_end": len(ids & stored)}


def _wait_drained(db: Path, n: int, timeout: float = 300.0) -> float:
    deadline = time.monotonic() + timeout
    with sqlite3.connect(db) as conn:
        while conn.execute("SELECT COUNT(*) FROM deliveries").fetchone()[0] < n:
            if time.monotonic() > deadline:
                raise SystemExit(f"{db}: the journal did not drain within {timeout:.0f} s")
            time.sleep(0.01)
    return time.time()


def measure_costs() -> dict[str, float]:
    """Per-operation CPU cost (µs) of the steps intake adds to the HMAC-only app, and of
    the drain; measured alone here, so lower than inside a loaded server."""
    import hashlib
    import hmac
    import io
    import logging
    import zlib

    import orjson

    from bot.delivery_fields import scan_prefix, scan_pull_request
    from bot.jsonlog import JsonFormatter
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
    per_call("json.loads (the worker's fallback)", lambda: json.loads(body))
    per_call("orjson.loads (previous intake, now the worker)", lambda: orjson.loads(body))
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
    work = Path(tempfile.mkdtemp(prefix="bench-costs-"))
    store = connect(work / "costs.db")
    journal = store.open_journal()
    assert journal is not None
    deliveries = [NewDelivery(str(uuid.uuid4()), "pull_request", "synchronize",
                              bytes(bytearray(body)), 0.0, 0.0, "o/r#1") for _ in range(2000)]
    start = time.process_time()
    for d in deliveries:  # a fresh 28 kB object each, as from the network
        journal.append(d)
    costs["journal append: encode + CRC-32 + one writev (28 kB)"] = (
        1e6 * (time.process_time() - start) / len(deliveries))
    per_call("duplicate check in SQLite (primary key lookup)",
             lambda: store.known_delivery("no-such-id"))
    start = time.process_time()
    store.drain_journal()
    costs["drain per row, kept in memory: zlib + INSERT (128-row transactions)"] = (
        1e6 * (time.process_time() - start) / len(deliveries))
    store.close()
    return costs


LOADAVG_AT_START = " ".join(Path("/proc/loadavg").read_text().split()[:3])


def orchestrate(n: int, concurrency: int, sustained: int, variants: bool,
                before: Path | None, repeat: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-intake-"))
    key = work / "app.pem"
    _write_key(key)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_STAB"))}

    def serve_env(db: Path, root: Path = ROOT) -> dict[str, str]:
        return {**base_env, "GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY_PATH": str(key),
                "GITHUB_WEBHOOK_SECRET": SECRET, "CI_STABILITY_DB": str(db),
                "CI_STABILITY_WORKERS": "0", "PYTHONPATH": str(root)}

    def variant(mode: str, db: Path) -> tuple[list[str], dict[str, str]]:
        return ([py, __file__, "--variant-server", str(db), mode],
                {**base_env, "PYTHONPATH": str(ROOT)})

    py = sys.executable
    serve_argv = [py, "-m", "bot.cli_serve", "--host", "127.0.0.1", "--port", "0"]
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
        if variants:
            db = work / f"group-commit-{t}.db"
            argv, env = variant("group-commit", db)
            trials.setdefault("app, group commit (no journal)", []).append(_measure(
                f"group-commit#{t}", argv, env, db, n, concurrency, work))
        if before is not None:
            db = work / f"before-{t}.db"
            trials.setdefault("serve before (previous intake)", []).append(_measure(
                f"serve-before#{t}", serve_argv, serve_env(db, before.resolve()), db, n,
                concurrency, work, cwd=before.resolve()))
    runs = {name: _median_run(results) for name, results in trials.items()}
    ratios = [s["rps"] / m["rps"] for s, m in zip(trials["serve"], trials["minimal"],
                                                    strict=True)]
    if sustained:
        db = work / "sustained.db"
        runs[f"serve, {sustained:,} deliveries"] = _measure(
            "serve-sustained", serve_argv, serve_env(db), db, sustained, concurrency, work)
        runs[f"minimal, {sustained:,} deliveries"] = _measure(
            "minimal-sustained", minimal_argv, base_env, None, sustained, concurrency, work)
        if variants:
            db = work / "group-commit-sustained.db"
            argv, env = variant("group-commit", db)
            runs[f"app, group commit (no journal), {sustained:,} deliveries"] = _measure(
                "group-commit-sustained", argv, env, db, sustained, concurrency, work)
    if variants:
        db = work / "eager.db"
        argv, env = variant("eager", db)
        runs["app, journal drained every 25 ms"] = _measure(
            "eager", argv, env, db, n, concurrency, work)
    costs = measure_costs()
    OUT.mkdir(exist_ok=True)
    (OUT / "intake.json").write_text(json.dumps(
        {"runs": runs, "trials": trials, "ratios": ratios, "costs_us": costs}, indent=2))
    _write_results(runs, ratios, costs, n, concurrency, sustained, repeat)


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


def _write_results(runs: dict[str, dict[str, Any]], ratios: list[float],
                   costs: dict[str, float], n: int, concurrency: int, sustained: int,
                   repeat: int) -> None:
    def row(name: str, r: dict[str, Any]) -> str:
        extra = (f"{r['durable']:.0f} / {r['in_sqlite_at_end']:.0f} | "
                 f"+{r['drained_after_s']:.2f} s | "
                 f"{r['cpu_incl_drain_us_per_request']:.0f}" if "durable" in r
                 else "— | — | —")
        statuses = ", ".join(f"{k}×{v}" for k, v in sorted(r["statuses"].items()))
        return (f"| {name} | {r['requests']} | {r['rps']:.0f} | {r['p50_ms']:.1f} | "
                f"{r['p99_ms']:.1f} | {r['server_cpu_us_per_request']:.0f} | "
                f"{r['client_cpu_us_per_request']:.0f} | {extra} | {statuses} |")

    serve, minimal = runs["serve"], runs["minimal"]
    ratio = serve["rps"] / minimal["rps"]
    group = runs.get("app, group commit (no journal)")
    sustained_ratio = ""
    if sustained:
        s_serve = runs[f"serve, {sustained:,} deliveries"]
        s_minimal = runs[f"minimal, {sustained:,} deliveries"]
        sustained_ratio = (f"; over {sustained:,} deliveries, where the drain runs during "
                           f"intake: **{s_serve['rps'] / s_minimal['rps']:.2f}**")
    RESULTS.write_text(RESULTS_TEMPLATE.format(
        machine=machine(), n=n, concurrency=concurrency, sustained=sustained,
        header=TABLE_HEADER, rows="\n".join(row(name, r) for name, r in runs.items()),
        ratio=ratio, sustained_ratio=sustained_ratio, repeat=repeat,
        trial_ratios=", ".join(f"{r:.2f}" for r in ratios),
        group_ratio=group["rps"] / minimal["rps"] if group else float("nan"),
        group_cpu=group["server_cpu_us_per_request"] if group else float("nan"),
        verdict="meets" if ratio >= 0.8 else "misses",
        cost_rows="\n".join(f"| {name} | {us:.1f} |" for name, us in costs.items()),
        date=time.strftime("%Y-%m-%d"), loadavg=LOADAVG_AT_START,
        drained=serve["drained_after_s"], drain_cpu=serve["cpu_incl_drain_us_per_request"],
        burst_cpu=serve["server_cpu_us_per_request"],
        minimal_cpu=minimal["server_cpu_us_per_request"],
    ))
    print(f"ratio serve/minimal = {ratio:.2f} (target >= 0.8){sustained_ratio}; wrote {RESULTS}")


TABLE_HEADER = (
    "| target | deliveries | req/s | p50 ms | p99 ms | server CPU µs/req | client CPU µs/req"
    " | durable / in SQLite | drained | CPU incl. drain µs/req | statuses |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)
RESULTS_TEMPLATE = """# Webhook intake benchmark

Command: `.venv/bin/python bench/bench_intake.py --n {n} --concurrency {concurrency} \\
--sustained {sustained} --repeat {repeat} --before DIR` (DIR: the previous intake's source
tree). Machine: {machine}, a KVM guest whose speed drifts between runs; the load generator
and the server share its two cores. Run on {date}; load average just before: {loadavg}.

{n} signed `pull_request.synchronize` deliveries (the vendored real payload, 28 kB, a
unique `X-GitHub-Delivery` each) at concurrency {concurrency}, from the same load generator
process (aiohttp client) for every row. The first rows are medians of {repeat} interleaved
runs, the rest single runs. Latency = request sent → response read, seen by the
generator. Server CPU = user+system time of the server process from the first request to
the last response, per request; statuses are summed over the runs. "durable / in SQLite"
= acknowledged deliveries found, the moment the burst ended, in the journal or the table
/ in the table alone (read by the benchmark while the server ran). "drained" = from the
last response until the table held them all; "CPU incl. drain" = server CPU from the
first request until then, per request.

{header}
{rows}

**Throughput ratio serve / minimal, burst of {n}: {ratio:.2f}** (median; the {repeat} runs:
{trial_ratios}; target ≥ 0.8: {verdict}){sustained_ratio}. The same code with group commit
instead of the journal (items 2 and 4 only): {group_ratio:.2f}.

## What is durable when the 202 goes out

`serve` appends each verified delivery to the intake journal (`<db>-intake/*.journal`,
one length-prefixed, CRC-checked record written with a single `writev` to a file opened
`O_APPEND`) and answers `202` once that write returned. From then on the delivery
survives the process dying — kill -9, OOM kill, a crash — because the bytes are in the
kernel's page cache: the same guarantee as a SQLite commit in WAL mode with
`synchronous=NORMAL`, which the previous intake gave. Neither survives power loss or a
kernel crash before the pages are written back (no fsync); the checksums then keep a
damaged tail from being replayed. The next process to open the database replays what
is left (tests/app/test_journal.py kills the server between the 202 and the drain); a
record cut short by a crash mid-write was never acknowledged, and is dropped.

## The drain is not free

Moving a record into SQLite (zlib, INSERT in 128-row transactions; records past 64 MB of
backlog are read back and CRC-checked first) is the same work the previous intake did in
its group commit: the journal moves it off the request path, it does not remove it.
After the burst the drain took {drained:.2f} s; counted in, the server spent
{drain_cpu:.0f} µs per delivery, against {burst_cpu:.0f} µs during the burst and
{group_cpu:.0f} µs for group commit (minimal app: {minimal_cpu:.0f} µs). A burst is absorbed at
the burst rate only while it lasts less than `DrainPolicy.max_delay` (2 s) and stays
under `max_backlog` (8,192 records); past that the drain runs during intake, and the
{sustained:,}-delivery rows show the throughput then. "drained every 25 ms" is the same app
with the drain never deferred.

## What paid, what did not

- Fast scan instead of a full parse (item 2), the intake log line through `extra=` with
  the record fields nobody prints switched off, and prebuilt response bodies (item 4):
  these are what separates the "before" row from the group-commit row.
- The journal (item 1): the append (CRC-32 and a 28 kB `writev`, ~19 µs alone but
  30–80 µs inside the loaded server on this guest, where fresh page-cache pages are
  expensive) plus the duplicate check cost about what zlib + INSERT cost in the group
  commit, so the burst gains little or nothing over group commit, and each delivery
  costs more CPU in all (the drain). What it does buy is that intake never waits on
  SQLite (a checkpoint, or another process holding the write lock for up to
  `busy_timeout`).
- Duplicates (item 3): recent ids in memory, a primary-key lookup on a miss (so a
  redelivery after a restart is still answered 200), INSERT OR IGNORE at the drain.

Why 0.8 is out of reach here: the generator needs most of one core (80–100 µs per
request), so at 0.8× of the minimal app's rate `serve` may spend about 100 µs of CPU per
request, some 35 µs more than the minimal app ({minimal_cpu:.0f} µs). The steps that cannot be
skipped add more than that even measured alone (table below: one JSON log line, the
durable write, the field scan, the duplicate check), and inside the loaded server each
costs about 1.5–2× its solo figure.

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
    parser.add_argument("--no-variants", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, metavar="K",
                        help="burst runs per core target, interleaved; medians reported")
    parser.add_argument("--before", type=Path, metavar="DIR",
                        help="also run `serve` from this source tree")
    parser.add_argument("--generate", metavar="URL")
    parser.add_argument("--server-pid", type=int, default=0)
    parser.add_argument("--minimal-server", action="store_true")
    parser.add_argument("--variant-server", nargs=2, metavar=("DB", "MODE"))
    args = parser.parse_args()
    if args.generate:
        run_generator(args.generate, args.n, args.concurrency, args.server_pid)
    elif args.minimal_server:
        run_minimal_server()
    elif args.variant_server:
        run_variant_server(args.variant_server[0], args.variant_server[1])
    else:
        orchestrate(args.n, args.concurrency, args.sustained, not args.no_variants, args.before,
                    max(1, args.repeat))


if __name__ == "__main__":
    main()
