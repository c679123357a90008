"""Dump every output a performance change must keep byte-identical, for diffing.

Writes, into OUT_DIR: `eval --split all --format json`, every corpus case's JSON
review, the JSON (and text) review of every `examples/*.json` PR, and the JSON review
of the bench's synthetic patch.
Run it before and after a change and compare the two directories with `diff -r`:

    .venv/bin/python bench/dump_review_outputs.py /tmp/before
    ... change ...
    .venv/bin/python bench/dump_review_outputs.py /tmp/after && diff -r /tmp/before /tmp/after

The processes run from a scratch directory so no work-tree config is picked up.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_review import generate  # noqa: E402
from bench.common import OUT  # noqa: E402

# Every corpus case's full JSON review (eval's own output shows only FPs and FNs).
CASES = """
import sys
from pathlib import Path
from bot.cli.common import select_rules
from bot.core.config import Config
from bot.core.engine import review
from bot.evaluation.corpus import load_cases
from bot.render import render
from bot.sources.prjson import snapshot_from_pr_data
rules = select_rules(None)
for case in load_cases(Path(sys.argv[1])):
    report = review(snapshot_from_pr_data(case.pr), Config(), rules)
    sys.stdout.write(f"=== {case.id}\\n" + render(report, "json", rules) + "\\n")
"""


def _run(argv: list[str], target: Path, cwd: str) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    target.write_bytes(done.stdout + f"\n--- exit {done.returncode}\n".encode() + done.stderr)


def main() -> int:
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    OUT.mkdir(parents=True, exist_ok=True)
    patch = OUT / "synthetic-pr.diff"
    generate(patch, 2000, 200_000)
    bot = [sys.executable, "-m", "bot"]
    with tempfile.TemporaryDirectory() as scratch:
        _run([*bot, "eval", "--corpus", str(ROOT / "eval" / "prs"), "--split", "all",
              "--format", "json"], out_dir / "eval-all.json", scratch)
        _run([sys.executable, "-c", CASES, str(ROOT / "eval" / "prs")],
             out_dir / "eval-cases.json", scratch)
        for example in sorted((ROOT / "examples").glob("*.json")):
            if example.name == "expected.json":
                continue
            for fmt in ("json", "text"):
                _run([*bot, "review", "--pr", str(example), "--format", fmt,
                      "--fail-level", "none"], out_dir / f"{example.stem}.{fmt}", scratch)
        _run([*bot, "review", "--patch", str(patch), "--format", "json",
              "--fail-level", "none"], out_dir / "bench-patch.json", scratch)
    print(f"wrote {len(list(out_dir.iterdir()))} files to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
