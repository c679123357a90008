"""Hostile changed files: every rule still runs, nothing crashes, nothing hangs."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.core.config import Config, ConfigError, parse_config
from bot.core.engine import review
from rules import ALL_RULES, option_specs
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


# --- bad PR JSON and configs through the CLI: an error naming the key, never exit 3 ----
BAD_PR_JSON = {
    "deep nesting": ("{\"files\": [], \"x\": " + "[" * 100_000 + "]" * 100_000 + "}",
                     "nested too deeply"),
    "non-string status": ('{"files": [{"filename": "a.py", "status": ["x"]}]}',
                          "files[0].status"),
    "mapping status": ('{"files": [{"filename": "a.py", "status": {}}]}', "files[0].status"),
    "scalar labels": ('{"files": [], "labels": 5}', "labels"),
    "string labels": ('{"files": [], "labels": "bug"}', "labels"),
    "label without name": ('{"files": [], "labels": [{"color": "red"}]}', "labels[0].name"),
    "label name not a string": ('{"files": [], "labels": [{"name": 3}]}', "labels[0].name"),
    "scalar label entry": ('{"files": [], "labels": [3]}', "labels[0]"),
    "scalar user": ('{"files": [], "user": "me"}', "user"),
    "login not a string": ('{"files": [], "user": {"login": []}}', "user.login"),
    "number not an integer": ('{"files": [], "number": "7"}', "number"),
    "head not an object": ('{"files": [], "head": []}', "head"),
    "contents not an object": ('{"files": [{"filename": "a", "contents": []}]}',
                               "files[0].contents"),
}


@pytest.mark.parametrize("case", sorted(BAD_PR_JSON))
def test_bad_pr_json_is_a_usage_error_naming_the_key(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    text, key = BAD_PR_JSON[case]
    path = tmp_path / "pr.json"
    path.write_text(text)
    code = main(["review", "--pr", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and key in err and "Traceback" not in err


BAD_CONFIGS = {
    "recursive alias": ("a: &a [*a]\n", "recursive alias"),
    "recursive mapping alias": ("rules: &r\n  silenced-test: *r\n", "recursive alias"),
    "billion laughs": (YAML_BOMB.replace("a:", "knobs:", 1).replace("\nj:", "\nextra_knobs:"),
                       "c.yml"),
    "1,000 levels": ("rules: " + "[" * 1000 + "]" * 1000 + "\n", "levels deep"),
    "1,000 mapping levels": ("rules: " + "{a: " * 1000 + "1" + "}" * 1000 + "\n",
                             "levels deep"),
    "many aliases": ("a: &a x\nknobs: [" + ", ".join(["*a"] * 500) + "]\n", "aliases"),
    "too big": ("knobs: [" + ", ".join(["x"] * 200_000) + "]\n", "larger than"),
    "bad timestamp": ("version: !!timestamp 2024-99-99\n", "version"),
    "list as a key": ("rules: {[1, 2]: 3}\n", "c.yml"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config_is_a_usage_error_saying_what_is_wrong(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    text, needle = BAD_CONFIGS[case]
    config = tmp_path / "c.yml"
    config.write_text(text)
    pr = tmp_path / "pr.json"
    pr.write_text('{"files": []}')
    code = main(["review", "--pr", str(pr), "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err
    with pytest.raises(ConfigError):
        parse_config(text, option_specs())
