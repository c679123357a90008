"""Webhook intake under wrk (a C load generator): `serve` on SQLite and on PostgreSQL
versus a bare HMAC-and-202 aiohttp app, in one invocation.

    .venv/bin/python bench/bench_intake_wrk.py [--seconds 10] [--connections 64] [--repeat 3]

wrk (Debian's package) posts the vendored real `pull_request.synchronize` payload
(28 kB) with a valid `X-Hub-Signature-256` and a unique `X-GitHub-Delivery` per request
(a Lua script: thread number + counter), one thread, `--connections` connections, for
`--seconds`. Targets, interleaved `--repeat` times (this machine's speed drifts):

  minimal     `bench/bench_intake.py --minimal-server`: verify the HMAC, answer 202
  sqlite      `serve` with workers paused (CI_STABILITY_WORKERS=0) on a fresh SQLite file
  postgresql  the same on a fresh PostgreSQL database (the local server, as tests use it)
  +writer     with `--writer`, both again with the intake writer process
              (CI_STABILITY_INTAKE_PROCESS=1, bot/store/intake_process.py)

The script counts the 202s wrk received; afterwards the inbox is promoted into the
queue (bot/store/inbox.py; the promotion's client CPU per row is reported apart, as
`serve`'s paused workers would pay it) and the deliveries table is counted: every 202
must be a committed row (`committed >= accepted`; wrk stops with requests in
flight, which may be committed without wrk seeing their 202). p50/p99 are wrk's
latency percentiles. CPU per request: the server process (all its threads) and its
children (`serve`'s intake writer; "serve itself" is the parent alone) and, for
`postgresql`, every PostgreSQL server process, over the wrk run (/proc), divided by
the requests wrk completed. On a machine busier than its cores, the throughput ratio
flatters a target with more runnable threads or processes (the scheduler shares the
cores among them), so read it next to the CPU per request. Writes
bench/out/intake_wrk.json; prints the table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import shutil
import signal
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

from bench.bench_intake import PAYLOAD, SECRET, _start, _write_key  # noqa: E402
from bench.common import OUT, machine  # noqa: E402
from bot.store import open_store  # noqa: E402
from tests.pg import PgServer  # noqa: E402

LUA = r"""
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-GitHub-Event"] = "pull_request"
wrk.headers["X-Hub-Signature-256"] = os.getenv("BENCH_SIGNATURE")
local threads = {}
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  counter, accepted, other = 0, 0, 0
  prefix = os.getenv("BENCH_PREFIX") .. "-" .. tid .. "-"
end
function request()
  counter = counter + 1
  wrk.headers["X-GitHub-Delivery"] = prefix .. counter
  return wrk.format()
end
function response(status, headers, body)
  if status == 202 then accepted = accepted + 1 else other = other + 1 end
end
function done(summary, latency, requests)
  local a, o = 0, 0
  for _, t in ipairs(threads) do a = a + t:get("accepted"); o = o + t:get("other") end
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "seconds": %.3f, "accepted": %d, "other": %d, "p50_ms": %.3f,'
    .. ' "p99_ms": %.3f, "errors": %d}\n',
    summary.requests, summary.duration / 1e6, a, o, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def _wrk(port: int, seconds: float, connections: int, work: Path) -> dict[str, Any]:
    body = PAYLOAD.read_bytes()
    env = {**os.environ, "BENCH_BODY": str(PAYLOAD), "BENCH_PREFIX": uuid.uuid4().hex[:12],
           "BENCH_SIGNATURE": "sha256=" + hmac.new(SECRET.encode(), body,
                                                   hashlib.sha256).hexdigest()}
    script = work / "intake.lua"
    script.write_text(LUA)
    done = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "10s",
         "-s", str(script), f"http://127.0.0.1:{port}/webhook"],
        env=env, capture_output=True, text=True, check=True,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("{"))
    result: dict[str, Any] = json.loads(line)
    result["rps"] = result["accepted"] / result["seconds"]
    return result


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_cpu_seconds(pid: int) -> float:
    """`pid` and its children: `serve` and its intake writer (bot/store/intake_process.py)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(entry.name) == pid or int(fields[1]) == pid:
                    total += _cpu_seconds(int(entry.name))
            except (OSError, ValueError):
                continue  # the process ended meanwhile
    return total


def _postgres_cpu_seconds() -> float:
    total = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "postgres":
                    total += _cpu_seconds(int(entry.name))
            except (OSError, ValueError):
                continue  # the process ended meanwhile
    return total


def _run(name: str, argv: list[str], env: dict[str, str], db: str | None,
         args: argparse.Namespace, work: Path) -> dict[str, Any]:
    proc, port = _start(argv, env, work / f"{name}.log")
    try:
        main0, server0, pg0 = (_cpu_seconds(proc.pid), _tree_cpu_seconds(proc.pid),
                               _postgres_cpu_seconds())
        result = _wrk(port, args.seconds, args.connections, work)
        main = _cpu_seconds(proc.pid) - main0
        server, pg = _tree_cpu_seconds(proc.pid) - server0, _postgres_cpu_seconds() - pg0
        result["server_us"] = server / max(result["requests"], 1) * 1e6
        result["main_us"] = main / max(result["requests"], 1) * 1e6
        result["postgres_us"] = pg / max(result["requests"], 1) * 1e6
        result["loadavg"] = os.getloadavg()[0]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    if db is not None:
        store = open_store(db)
        try:
            # Intake wrote the inbox; promoting it (the workers' job, paused here) is
            # timed apart, then the queue's rows are counted.
            in_inbox = store.inbox_count()
            started = time.process_time()
            promoted = store.promote_all()
            result["promote_us"] = (time.process_time() - started) / max(promoted, 1) * 1e6
            result["committed"] = int(store.db.execute(
                "SELECT COUNT(*) FROM deliveries").fetchone()[0])
            if in_inbox != promoted or store.inbox_count():
                raise SystemExit(f"{name}: inbox {in_inbox}, promoted {promoted}")
        finally:
            store.close()
        if result["committed"] < result["accepted"]:
            raise SystemExit(f"{name}: acknowledged deliveries are missing: {result}")
    print(f"{name:<14} {result['rps']:7.0f} req/s (202s)  p50 {result['p50_ms']:6.1f} ms  "
          f"p99 {result['p99_ms']:6.1f} ms  CPU {result['server_us']:4.0f}+"
          f"{result['postgres_us']:.0f} us/req (serve itself {result['main_us']:.0f})  "
          f"load {result['loadavg']:.1f}  "
          f"other {result['other']}  errors {result['errors']}"
          + (f"  committed {result['committed']} >= {result['accepted']}"
             f"  promotion {result['promote_us']:.0f} us/row (client)" if db else ""),
          flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--writer", action="store_true",
                        help="also serve with the intake writer process"
                             " (CI_STABILITY_INTAKE_PROCESS=1) on both backends")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    work = Path(tempfile.mkdtemp(prefix="bench-wrk-"))
    key = work / "app.pem"
    _write_key(key)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_STAB"))}
    py = sys.executable
    serve_argv = [py, "-m", "bot.cli.serve", "--host", "127.0.0.1", "--port", "0"]
    minimal_argv = [py, str(ROOT / "bench/bench_intake.py"), "--minimal-server"]
    pg = PgServer()
    targets = ["minimal", "sqlite", "postgresql"]
    if args.writer:
        targets += ["sqlite+writer", "postgresql+writer"]
    trials: dict[str, list[dict[str, Any]]] = {target: [] for target in targets}
    try:
        for t in range(args.repeat):
            for target in targets:
                backend = target.split("+")[0]
                if backend == "minimal":
                    trials[backend].append(_run(f"minimal#{t}", minimal_argv, base_env, None,
                                                args, work))
                    continue
                db = pg.url() if backend == "postgresql" else str(work / f"serve-{target}-{t}.db")
                env = {**base_env, "GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY_PATH": str(key),
                       "GITHUB_WEBHOOK_SECRET": SECRET, "CI_STABILITY_DB": db,
                       "CI_STABILITY_WORKERS": "0", "PYTHONPATH": str(ROOT),
                       # No GitHub here: GET /app fails at once; no metrics listener.
                       "GITHUB_API_URL": "http://127.0.0.1:9", "METRICS_PORT": "off",
                       "CI_STABILITY_INTAKE_PROCESS": "1" if "+writer" in target else "0"}
                trials[target].append(_run(f"{target}#{t}", serve_argv, env, db, args, work))
    finally:
        pg.drop()
    summary: dict[str, Any] = {}
    for backend in targets[1:]:
        ratios = [s["rps"] / m["rps"] for s, m in zip(trials[backend], trials["minimal"],
                                                        strict=True)]
        summary[backend] = {
            "rps": statistics.median(r["rps"] for r in trials[backend]),
            "cpu_us": statistics.median(r["server_us"] + r["postgres_us"]
                                        for r in trials[backend]),
            "p99_ms": statistics.median(r["p99_ms"] for r in trials[backend]),
            "ratio": statistics.median(ratios), "ratios": ratios,
            "promote_us": statistics.median(r["promote_us"] for r in trials[backend]),
            "main_us": statistics.median(r.get("main_us", r["server_us"])
                                         for r in trials[backend]),
        }
    summary["minimal"] = {"rps": statistics.median(r["rps"] for r in trials["minimal"]),
                          "cpu_us": statistics.median(r["server_us"] for r in trials["minimal"]),
                          "p99_ms": statistics.median(r["p99_ms"] for r in trials["minimal"])}
    OUT.mkdir(exist_ok=True)
    (OUT / "intake_wrk.json").write_text(json.dumps({
        "meta": {**vars(args), "machine": machine(), "date": time.strftime("%Y-%m-%d"),
                 "loadavg": os.getloadavg()},
        "trials": trials, "summary": summary}, indent=2))
    loads = [r["loadavg"] for runs in trials.values() for r in runs]
    print(f"\nload average during the runs: {min(loads):.1f}–{max(loads):.1f}")
    print("\n| target | 202/s (median) | p99 ack | CPU µs/request (server + PostgreSQL;"
          " serve's own process) | promotion µs/row | ratio to minimal (median of runs) |")
    print("|---|---|---|---|---|---|")
    print(f"| minimal HMAC-and-202 | {summary['minimal']['rps']:,.0f} | "
          f"{summary['minimal']['p99_ms']:.1f} ms | {summary['minimal']['cpu_us']:.0f} | — |"
          " 1 |")
    for backend in targets[1:]:
        s = summary[backend]
        print(f"| serve, {backend} | {s['rps']:,.0f} | {s['p99_ms']:.1f} ms | "
              f"{s['cpu_us']:.0f} ({s['main_us']:.0f}) | {s['promote_us']:.0f} | "
              f"**{s['ratio']:.2f}** ({', '.join(f'{r:.2f}' for r in s['ratios'])}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
