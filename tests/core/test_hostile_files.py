"""Hostile changed files: every rule still runs, nothing crashes, nothing hangs."""

from __future__ import annotations

from bot.core.config import Config
from bot.core.engine import review
from rules import ALL_RULES
from tests.conftest import make_snapshot

YAML_BOMB = "a: &a [" + ", ".join(['"lol"'] * 9) + "]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9)
)


def _review(files: list[dict[str, str | None]], patch_only: bool = False) -> None:
    snapshot = make_snapshot(files, title="[CI] fix flaky OOM", body="x" * 100_000,
                             patch_only=patch_only)
    report = review(snapshot, Config(), ALL_RULES)
    crashes = [f for f in report.findings if "failed on this pull request" in f.message]
    assert crashes == []


def test_yaml_bomb_in_workflow_and_eval_config() -> None:
    for path in (".github/workflows/bomb.yml", "tests/evals/gsm8k/configs/bomb.yaml",
                 ".buildkite/test-pipeline.yaml"):
        for patch_only in (False, True):
            _review([{"path": path, "base": "jobs: {}\n", "head": YAML_BOMB}], patch_only)


def test_invalid_yaml_python_and_odd_text() -> None:
    files: list[dict[str, str | None]] = [
        {"path": ".github/workflows/bad.yml", "base": "a: 1\n",
         "head": "a: [1,\n  b: {{{\n\t- tab\n"},
        {"path": "test/registered/cpu/test_bad.py", "base": "x = 1\n",
         "head": "def test_(:\n    @pytest.mark.skip(\n\x00\ufffd\ufffd\n"},
        {"path": "tests/conftest.py", "base": None, "head": "é" * 50_000 + "\n"},
        {"path": ".github/workflows/long.yml", "base": "a: 1\n",
         "head": "run: " + "x " * 200_000 + "\n"},
        {"path": "tests/evals/deep.yaml", "base": "a: 1\n", "head": "[" * 50_000 + "\n"},
    ]
    _review(files)
    _review(files, patch_only=True)
