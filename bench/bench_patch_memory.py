"""Peak memory of `ci-stability review --patch` on a 100,000-file patch.

Generates the mixed synthetic PR of bench/bench_review.py with FILES files and LINES
changed lines, then runs, as whole processes, our review and a baseline process that
only reads the patch into memory (decoded), and reports both peak RSS figures and
their ratio. Target: review peak < 300 MB.

Run: `.venv/bin/python bench/bench_patch_memory.py [--files 100000 --lines 1000000]`
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_review import generate
from bench.common import OUT, machine, run_process

READ_ONLY = "import sys\ntext = open(sys.argv[1], encoding='utf-8').read()\nprint(len(text))\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    patch = OUT / "many-files.diff"
    generate(patch, args.files, args.lines)
    review = run_process([sys.executable, "-m", "bot", "review", "--patch", str(patch),
                          "--format", "json", "--fail-level", "none"], OUT / "many-files.json")
    baseline = run_process([sys.executable, "-c", READ_ONLY, str(patch)])
    if review.returncode != 0 or baseline.returncode != 0:
        print("a process failed:", review, baseline, file=sys.stderr)
        return 1
    size_mb = patch.stat().st_size / 1e6
    print(f"machine: {machine()}")
    print(f"patch: {args.files} files, {args.lines} changed lines, {size_mb:.1f} MB")
    print("| process | s | peak RSS MB |")
    print("|---|---|---|")
    print(f"| ci-stability review --format json | {review.seconds:.1f} | "
          f"{review.max_rss_mb:.0f} |")
    print(f"| read the patch only (baseline) | {baseline.seconds:.1f} | "
          f"{baseline.max_rss_mb:.0f} |")
    print(f"peak RSS ratio (review / read only): {review.max_rss_mb / baseline.max_rss_mb:.1f}; "
          f"review peak {'<' if review.max_rss_mb < 300 else '≥'} 300 MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
