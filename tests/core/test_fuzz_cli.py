"""Mutated PR JSON files and configs through the CLI: never exit 3, never a traceback,
never a hang (the full count runs in bench/fuzz_cli.py)."""

from __future__ import annotations

from pathlib import Path

from tests.core.mutants import fuzz

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEEDS = sorted(p for p in EXAMPLES.glob("*.json") if p.name != "expected.json")


def test_mutated_inputs_give_errors_not_crashes(tmp_path: Path) -> None:
    tally = fuzz(SEEDS, tmp_path, n_pr=150, n_config=100, seed=9)
    assert tally.internal == [] and tally.hangs == []
    assert tally.runs == 350
    # The mutants are hostile enough to be refused often, and harmless ones still review.
    assert tally.by_exit.get(2, 0) > 50 and tally.by_exit.get(0, 0) + tally.by_exit.get(1, 0) > 50
