"""Helpers shared by the benchmarks: run a whole process, time it, read its peak RSS."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).parent / "out"


@dataclass(frozen=True)
class ProcessRun:
    seconds: float
    max_rss_mb: float
    returncode: int
    cpu_seconds: float = 0.0  # user + system: steadier than wall time on a shared machine


def run_process(argv: list[str], stdout_path: Path | None = None) -> ProcessRun:
    """Wall time and peak RSS of one whole process (os.wait4 gives per-child rusage)."""
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL  # noqa: SIM115
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    finally:
        if stdout_path:
            out.close()  # type: ignore[union-attr]
    proc.returncode = os.waitstatus_to_exitcode(status)
    return ProcessRun(seconds, usage.ru_maxrss / 1024, proc.returncode,
                      usage.ru_utime + usage.ru_stime)


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}, Python {platform.python_version()}"
