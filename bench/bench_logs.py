"""Benchmark: `ci-stability logs extract` vs `grep -E` over a large generated CI log.

    python bench/bench_logs.py [--size-mb 500] [--keep]

Generates a mixed log (GitHub Actions and Buildkite formats, raw Buildkite APC
markers and colours, noise lines including benign words such as "error" in test
names, a few 100-450 KB single lines, and a handful of real failures) in
bench/out/, then times, as whole processes and one run each:

* our extractor: `python -m bot.cli.logs extract FILE --format json` (Hyperscan + RE2
  where installed), and again with `--engine python` (the pure-Python fallback);
* `grep -E -n -f PATTERNS FILE` with the catalog's regexes exported to ERE, under
  the environment's locale and under LC_ALL=C.

It prints a markdown table (throughput, ratio to grep, peak RSS of our process) and
checks that the extractor found the planted root cause.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))

from bot.evidence.patterns import grep_patterns, load_catalog  # noqa: E402

# --- log generation ---------------------------------------------------------

_OPS = ["add", "mul", "conv2d", "linear", "softmax", "layer_norm", "gather", "index_put"]
_DTYPES = ["float32", "float16", "bfloat16", "int64", "complex64"]


def _gha(rng: random.Random, text: str) -> str:
    return f"2026-07-30T{rng.randrange(24):02}:{rng.randrange(60):02}:{rng.randrange(60):02}." \
           f"{rng.randrange(10**7):07}Z {text}"


def _bk(rng: random.Random, text: str) -> str:
    return f"[2026-07-13T19:{rng.randrange(60):02}:{rng.randrange(60):02}Z] {text}"


def _bk_raw(rng: random.Random, text: str) -> str:
    return f"\x1b_bk;t={1778141500000 + rng.randrange(10**6)}\x07\x1b[0;36m{text}\x1b[0m"


def _noise_text(rng: random.Random) -> str:
    op, dt = rng.choice(_OPS), rng.choice(_DTYPES)
    roll = rng.random()
    if roll < 0.45:
        return (
            f"test_ops.py::TestCommonCUDA::test_{op}_{rng.randrange(999)}_cuda_{dt} "
            f"PASSED [{rng.random():.4f}s] [ {rng.randrange(100):2}%]"
        )
    if roll < 0.60:
        return (
            f"[{rng.randrange(1, 3874)}/3874] Building CXX object "
            f"caffe2/CMakeFiles/torch_cpu.dir/__/aten/src/ATen/native/{op.title()}.cpp.o"
        )
    if roll < 0.68:
        return f"Requirement already satisfied: pkg{rng.randrange(500)}>=1.{rng.randrange(9)} in " \
               "/opt/conda/lib/python3.10/site-packages (from torch==2.14.0)"
    if roll < 0.76:
        return f"(APIServer pid={rng.randrange(99999)}) INFO 07-13 19:{rng.randrange(60):02}:" \
               f"{rng.randrange(60):02} [loggers.py:{rng.randrange(300)}] Engine 000: Avg prompt " \
               f"throughput: {rng.random() * 900:.1f} tokens/s, Running: {rng.randrange(64)} reqs"
    if roll < 0.82:
        return f"  {rng.choice(['GIT_DEFAULT_BRANCH', 'AWS_REGION', 'TEST_CONFIG'])}: main"
    if roll < 0.88:
        return f"Loading weights: {rng.randrange(100)}%|###       | {rng.randrange(146)}/146 " \
               f"[00:0{rng.randrange(9)}<00:{rng.randrange(60):02}, {rng.random():.2f}s/it]"
    if roll < 0.96:
        return f"+ python test/run_test.py --shard {rng.randrange(1, 6)} 5 --verbose"
    if roll < 0.99:
        # Identifier and flag contexts: found by a naive search, skipped by the gates.
        return rng.choice([
            f"test_nn.py::TestNN::test_error_messages_{dt} PASSED [0.0100s] [ 50%]",
            "-- Performing Test HAS_WERROR_RETURN_TYPE - Success",
            f"test_exceptions.py::TestExc::test_exception_{op} PASSED [0.0031s] [ 12%]",
            "Compiling with -Werror=return-type -Wno-error=deprecated",
            "Summary: 0 errors, 0 failures, 3 skipped",
        ])
    # Near misses that reach the line classifier (1% of lines, more than a typical
    # log): real lines from the vendored CI logs plus common pytest/sccache output.
    return rng.choice(NEAR_MISSES)


# Lines that contain a prefilter literal but are no failure. The first ones are
# verbatim from shared/ci-logs (tests/data/ci-logs); the rest are typical of test logs.
NEAR_MISSES = (
    "    metadata = get_hf_file_metadata(url=url, proxies=proxies, timeout=etag_timeout)",
    "    res = self._popen.wait(timeout)",
    "  warn(f\"Error uploading metric {metric_name} to DynamoDB: {e}\")",
    "/var/lib/jenkins/workspace/tools/stats/upload_metrics.py:156: UserWarning: Error uploading"
    " metric td_test_failure_stats_v2 to DynamoDB: Unable to locate credentials",
    "Failed to parse and upload json test reports: Unable to locate credentials",
    "Compile requests                         1321",
    "No stepcurrent file found. Either pytest didn't get to run (e.g. import error) or file got"
    " deleted (contact dev infra)",
    "========== 1182 passed, 1523 skipped, 24 xfailed in 497.69s (0:08:17) ==========",
    "  if-no-files-found: error",
    "##[group]Run kill \"$MONITOR_SCRIPT_PID\"",
    "test_ops.py::TestCommonCUDA::test_python_ref_errors_cuda_float32 XFAIL [0.0114s] [ 40%]",
    "test_dataloader.py::TestDataLoader::test_timeout PASSED [2.1010s] [ 33%]",
    "test_cuda.py::TestCuda::test_graph_error_handling SKIPPED (not found) [ 71%]",
)


def _long_line(rng: random.Random) -> str:
    items = ", ".join(
        f"test/test_ops.py::TestCommonCUDA::test_{rng.choice(_OPS)}_{i}_cuda_{rng.choice(_DTYPES)}"
        for i in range(rng.randrange(1500, 6000))
    )
    return f"Running {items.count(',') + 1} items in this shard: {items}"


def _noise_block(rng: random.Random, target_bytes: int) -> str:
    lines: list[str] = []
    size = 0
    wrap = rng.choice([_gha, _bk, _bk_raw])
    while size < target_bytes:
        if rng.random() < 0.002:
            wrap = rng.choice([_gha, _bk, _bk_raw])  # format switches between sections
        text = _long_line(rng) if rng.random() < 0.00002 else _noise_text(rng)
        line = wrap(rng, text)
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Planted:
    fraction: float
    line: str


# A job that hit a 30-minute harness timeout, later a CUDA OOM, then wrappers. The OOM
# is the root cause; grep sees all of them.
PLANTED = (
    Planted(0.20, "2026-07-30T10:37:27.7634265Z Command took >30min, returning 124"),
    Planted(0.35, "2026-07-30T10:37:27.7640431Z Got exit code 124"),
    Planted(
        0.60,
        "2026-07-30T03:36:29.7354318Z torch.OutOfMemoryError: CUDA out of memory. Tried to "
        "allocate 4.39 GiB. GPU 0 has a total capacity of 22.30 GiB of which 2.94 GiB is free.",
    ),
    Planted(0.61, "[2026-07-13T19:39:36Z] RuntimeError: test_cuda 1/1 failed!"),
    Planted(0.99, "2026-07-29T09:31:11.1935632Z ##[error]Process completed with exit code 1."),
)
EXPECTED_CATEGORY = "cuda-oom"


def generate(path: Path, size_mb: int, seed: int = 7) -> int:
    """Write the log; return the 1-based line number of the planted root cause."""
    rng = random.Random(seed)
    blocks = [_noise_block(random.Random(seed * 1000 + i), 1 << 20) for i in range(48)]
    target = size_mb * (1 << 20)
    written = lines = 0
    planted = list(PLANTED)
    expected_line = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        while written < target:
            while planted and written >= planted[0].fraction * target:
                out.write(planted[0].line + "\n")
                written += len(planted[0].line.encode()) + 1
                lines += 1
                if "OutOfMemoryError" in planted[0].line:
                    expected_line = lines
                planted.pop(0)
            block = rng.choice(blocks)
            out.write(block)
            written += len(block.encode())
            lines += block.count("\n")
        for rest in planted:
            out.write(rest.line + "\n")
    return expected_line


# --- measurement --------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float  # user + system seconds of the child: robust to other load on the machine
    max_rss_kb: int
    stdout: bytes
    returncode: int


TIME_BIN = "/usr/bin/time"


def run_process(cmd: list[str], env: dict[str, str] | None = None) -> Run:
    """Run `cmd` once, timed; peak RSS from GNU time when available.

    RUSAGE_CHILDREN's ru_maxrss would also count the pages a forked child shares
    with this (large) benchmark process before it execs, so GNU time, a small
    process, starts the command and reports its maximum resident set size.
    """
    use_time = os.path.exists(TIME_BIN)
    full = [TIME_BIN, "-f", "%M", *cmd] if use_time else cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(full, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss = -1
    if use_time:
        last = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
        rss = int(last[0]) if last and last[0].isdigit() else -1
    return Run(wall, cpu, rss, proc.stdout, proc.returncode)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--keep", action="store_true", help="keep the generated log")
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / f"mixed-{args.size_mb}mb.log"
    t0 = time.perf_counter()
    expected_line = generate(log, args.size_mb)
    gen_s = time.perf_counter() - t0
    size_mb = log.stat().st_size / 1e6
    pattern_file = OUT / "catalog.ere"
    pattern_file.write_text("\n".join(grep_patterns()) + "\n", encoding="utf-8")
    ignore = load_catalog().ignore

    ours_cmd = [sys.executable, "-m", "bot.cli.logs", "extract", str(log), "--format", "json"]
    grep_cmd = ["grep", "-E", "-n", "-f", str(pattern_file), str(log)]
    # Warm the page cache so that every tool reads from memory.
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=True)

    ours = run_process(ours_cmd, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    result = json.loads(ours.stdout or b"{}")
    fallback = run_process([*ours_cmd, "--engine", "python"],
                           env=dict(os.environ, PYTHONPATH=str(ROOT)))
    same = json.loads(fallback.stdout or b"{}") == result
    grep_env = run_process(grep_cmd)
    grep_c = run_process(grep_cmd, env=dict(os.environ, LC_ALL="C"))
    grep_lines = grep_c.stdout.count(b"\n")

    best_grep_cpu = min(grep_env.cpu, grep_c.cpu)
    best_grep_wall = min(grep_env.wall, grep_c.wall)
    locale = os.environ.get("LC_ALL") or os.environ.get("LANG") or "unset"
    load = os.getloadavg()[0]
    print(f"log: {log.name}, {size_mb:.0f} MB ({gen_s:.1f}s to generate); {os.cpu_count()} CPUs, "
          f"{cpu_model()}, Python {platform.python_version()}, load average {load:.2f}\n")
    print("| tool | wall s | CPU s | MB/s (wall) | MB/s (CPU) | ratio to grep (wall / CPU) "
          "| peak RSS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = [
        ("ci-stability logs extract --format json", ours,
         f"{ours.max_rss_kb / 1024:.1f} MB" if ours.max_rss_kb > 0 else "n/a"),
        ("ci-stability logs extract --format json --engine python", fallback,
         f"{fallback.max_rss_kb / 1024:.1f} MB" if fallback.max_rss_kb > 0 else "n/a"),
        (f"grep -E -n -f catalog.ere (LANG={locale})", grep_env, "-"),
        ("grep -E -n -f catalog.ere (LC_ALL=C)", grep_c, "-"),
    ]
    for name, run, rss in rows:
        print(f"| {name} | {run.wall:.2f} | {run.cpu:.2f} | {size_mb / run.wall:.0f} | "
              f"{size_mb / run.cpu:.0f} | {best_grep_wall / run.wall:.2f} / "
              f"{best_grep_cpu / run.cpu:.2f} | {rss} |")
    print()
    found = result.get("line_no") == expected_line and result.get("category") == EXPECTED_CATEGORY
    print(f"extractor: {result.get('category')} at line {result.get('line_no')} "
          f"(planted {EXPECTED_CATEGORY} at {expected_line}: {'ok' if found else 'MISSED'}); "
          f"pure-Python fallback: {'same JSON' if same else 'DIFFERENT JSON'}; "
          f"grep printed {grep_lines} matching lines"
          + (" (grep cannot apply the catalog's `ignore` rule"
             f" {ignore.pattern!r})" if ignore else ""))
    if not args.keep:
        log.unlink()
    return 0 if found and same and ours.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
