"""Fuzz the CLI: mutated PR JSON files and mutated configs → 0 exit 3, 0 tracebacks,
0 hangs. The mutants come from tests/core/mutants.py (the suite runs a few hundred).

    .venv/bin/python bench/fuzz_cli.py --pr 4000 --config 4000 --seed 1

Each input runs `ci-stability review` in-process (`bot.cli.main`, the same entry
point as the console script, minus ~0.5 s of interpreter start per run); a 20 s
alarm per input counts a hang. `--code DIR` runs the same mutants (same seed) through
another checkout's `bot/` (e.g. `--code /work/main`), for the before/after figure.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import OUT, machine  # noqa: E402


def _mutants(code: str | None) -> ModuleType:
    """This tree's mutants, importing `bot` from `code` when given."""
    if code:
        sys.path.insert(0, code)
    spec = importlib.util.spec_from_file_location("fuzz_mutants",
                                                  ROOT / "tests" / "core" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pr", type=int, default=4000, help="mutated PR JSON files")
    parser.add_argument("--config", type=int, default=4000, help="mutated configs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--code", help="another checkout whose bot/ to fuzz instead")
    args = parser.parse_args()
    fuzz = _mutants(args.code).fuzz
    seeds = sorted(p for p in (ROOT / "examples").glob("*.json") if p.name != "expected.json")
    started = time.perf_counter()
    tally = fuzz(seeds, OUT / "fuzz", args.pr, args.config, args.seed)
    seconds = time.perf_counter() - started
    result = {
        "machine": machine(), "code": args.code or str(ROOT), "seed": args.seed,
        "pr_files": args.pr, "configs": args.config,
        "cli_runs": tally.runs, "exit_codes": dict(sorted(tally.by_exit.items())),
        "exit_3_or_traceback": len(tally.internal), "hangs": len(tally.hangs),
        "exit_3_or_traceback_by_input": {
            kind: sum(1 for line in tally.internal if line.startswith(f"{kind}#"))
            for kind in ("pr", "config", "config-check")},
        "slowest_input_s": round(tally.slowest, 2), "seconds": round(seconds, 1),
        "first_internal": tally.internal[:5],
    }
    print(json.dumps(result, indent=2))
    return 0 if not tally.internal and not tally.hangs else 1


if __name__ == "__main__":
    raise SystemExit(main())
