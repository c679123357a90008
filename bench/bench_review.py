"""Whole-process `ci-stability review --patch … --format json` vs parsing with unidiff.

Generates a synthetic PR of 2,000 files / 200,000 changed lines (eval configs, tests and
workflows mixed), then times, as whole processes and alternating, our review and a
process that only parses the same patch with `unidiff`. Reports medians and the ratio
(target ≤ 1.0). Run: `.venv/bin/python bench/bench_review.py [--files N] [--repeat K]`.

Both sides load cached bytecode: `bot/` and `rules/` are byte-compiled first, as pip
does when it installs the wheel (unidiff's was compiled when it was installed). In a
shell with PYTHONDONTWRITEBYTECODE set, an editable checkout would otherwise compile
~140 modules on every run (~0.1 s) that no installed copy ever compiles.
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import OUT, machine, run_process


# Each generator returns (context lines, removed lines, added lines) for one file.
# The edits are the ordinary kind (renamed tasks, new assertions, new steps) with one
# tuning knob changed per file: a big refactor, not 200,000 lines of anti-patterns.
def _eval_config(i: int, n: int) -> tuple[list[str], list[str], list[str]]:
    context = [f'model_name: "org/model-{i}"', "accuracy_threshold: 0.90", "num_fewshot: 5",
               "server_args: >-", "  --enforce-eager", "  --trust-remote-code", "tasks:"]
    removed = ["  --max-num-batched-tokens 8192"]
    removed += [f"  - name: task_{i}_{k}\n    split: test".split("\n")[k % 2] for k in range(n - 1)]
    added = ["  --max-num-batched-tokens 16384"]
    added += [f"  - name: gsm8k_{i}_{k}" if k % 2 == 0 else f"    split: validation_{k}"
              for k in range(n - 1)]
    return context, removed, added


def _test(i: int, n: int) -> tuple[list[str], list[str], list[str]]:
    context = ["import unittest", "", f"class TestCase{i}(unittest.TestCase):"]
    removed = ['    ARGS = ["--mem-fraction-static", "0.2"]']
    removed += [f"    def test_case_{k}(self): self.assertEqual(run({k}), {k})"
                for k in range(n - 1)]
    added = ['    ARGS = ["--mem-fraction-static", "0.25"]']
    added += [f"    def test_case_{k}(self): self.assertEqual(run_model({k}), expected({k}))"
              for k in range(n - 1)]
    return context, removed, added


def _workflow(i: int, n: int) -> tuple[list[str], list[str], list[str]]:
    context = [f"name: wf-{i}", "on: pull_request", "jobs:", "  test:", "    runs-on: ubuntu",
               "    timeout-minutes: 60", "    steps:"]
    removed = [f"      - run: pytest tests/unit/t{k}.py -q" for k in range(n)]
    added = [f"      - run: python -m pytest tests/unit/test_{k}.py -q -x" for k in range(n - 1)]
    added.append("        env: {PYTHONUNBUFFERED: '1'}")
    return context, removed, added


def generate(path: Path, files: int, changed_lines: int) -> None:
    per_file = changed_lines // files // 2  # half removed, half added
    kinds = [
        (_eval_config, "tests/evals/gsm8k/configs/Model-{i}.yaml"),
        (_test, "test/registered/cpu/test_case_{i}.py"),
        (_workflow, ".github/workflows/wf-{i}.yml"),
    ]
    with path.open("w", encoding="utf-8") as out:
        for i in range(files):
            make, pattern = kinds[i % len(kinds)]
            name = pattern.format(i=i)
            context, removed, added = make(i, per_file)
            out.write(f"diff --git a/{name} b/{name}\nindex 1111111..2222222 100644\n"
                      f"--- a/{name}\n+++ b/{name}\n")
            out.write(f"@@ -1,{len(context) + len(removed)} +1,{len(context) + len(added)} @@\n")
            out.writelines(f" {line}\n" for line in context)
            out.writelines(f"-{line}\n" for line in removed)
            out.writelines(f"+{line}\n" for line in added)


UNIDIFF_ONLY = (
    "import sys, unidiff\n"
    "patch = unidiff.PatchSet(open(sys.argv[1], encoding='utf-8'))\n"
    "print(len(patch))\n"
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parent.parent
    for package in ("bot", "rules"):
        compileall.compile_dir(root / package, quiet=1)
    patch = OUT / "synthetic-pr.diff"
    generate(patch, args.files, args.lines)
    ours = [sys.executable, "-m", "bot", "review", "--patch", str(patch), "--format", "json",
            "--fail-level", "none"]
    theirs = [sys.executable, "-c", UNIDIFF_ONLY, str(patch)]
    review_runs, unidiff_runs = [], []
    for _ in range(args.repeat):  # alternate so machine noise hits both alike
        review_runs.append(run_process(ours, OUT / "review.json"))
        unidiff_runs.append(run_process(theirs))
    if any(r.returncode != 0 for r in review_runs + unidiff_runs):
        print("a process failed:", review_runs, unidiff_runs, file=sys.stderr)
        return 1
    report = json.loads((OUT / "review.json").read_text())
    ours_s = statistics.median(r.seconds for r in review_runs)
    theirs_s = statistics.median(r.seconds for r in unidiff_runs)
    size_mb = patch.stat().st_size / 1e6
    print(f"machine: {machine()}")
    print(f"patch: {args.files} files, {args.lines} changed lines, {size_mb:.1f} MB; "
          f"findings: {len(report['findings'])}; runs: {args.repeat} each, medians")
    ours_cpu = statistics.median(r.cpu_seconds for r in review_runs)
    theirs_cpu = statistics.median(r.cpu_seconds for r in unidiff_runs)
    print("| process | median s | median CPU s | peak RSS MB |")
    print("|---|---|---|---|")
    print(f"| ci-stability review --format json | {ours_s:.2f} | {ours_cpu:.2f} | "
          f"{max(r.max_rss_mb for r in review_runs):.0f} |")
    print(f"| unidiff parse only | {theirs_s:.2f} | {theirs_cpu:.2f} | "
          f"{max(r.max_rss_mb for r in unidiff_runs):.0f} |")
    print(f"ratio (review / unidiff): {ours_s / theirs_s:.2f} (target ≤ 1.0); "
          f"CPU ratio {ours_cpu / theirs_cpu:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
