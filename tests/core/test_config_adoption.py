"""Config for adopters: every error at once, a published JSON Schema that agrees with the
parser, and discovery from the git root for --patch/--pr (and staged changes)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft7Validator

from bot.cli import main
from bot.cli.config import schema_text
from bot.core.config import _TOP_KEYS, CONFIG_PATH, ConfigError, parse_config
from rules import RULES_BY_ID, option_specs

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "schema/ci-stability.schema.json"
WORKFLOW_PATCH = (
    "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\n"
    "--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n"
    "@@ -1,3 +1,4 @@\n jobs:\n   test:\n+    continue-on-error: true\n     runs-on: ubuntu\n"
)
VALID = [
    "version: 1\nfail_on: warning\non_error: failure\n",
    "rules:\n  knob-rationale: false\n  runtime-download: warning\n",
    "rules:\n  parallel-state-patch:\n    enabled: true\n    severity: error\n"
    "    options:\n      hint: use the override\n",
    "rules:\n  threshold-loosening:\n    options:\n      gates: ['*score*']\n",
    "surfaces:\n  eval-config: ['benchmarks/accuracy/**']\n  workflow: .ci/*.yml\n",
    "extra_knobs: [my_knob]\nknobs: [a, b]\ndedup_heading: '(?im)^#+ dup'\n",
    "ignore:\n  - rule: silenced-test\n    paths: ['test/legacy/**']\n    reason: tracked\n",
    "review_drafts: true\n",
    "limits:\n  max_files: 300\n  max_bytes: 1048576\n",
]
INVALID = [
    "version: 2\n",
    "fail_on: sometimes\n",
    "on_error: explode\n",
    "unknown_key: 1\n",
    "rules:\n  no-such-rule: false\n",
    "rules:\n  knob-rationale: loud\n",
    "rules:\n  knob-rationale:\n    colour: red\n",
    "rules:\n  parallel-state-patch:\n    options:\n      nope: 1\n",
    "rules:\n  threshold-loosening:\n    options:\n      gates: 3\n",
    "surfaces:\n  not-a-surface: ['x']\n",
    "ignore:\n  - rule: silenced-test\n",
    "ignore:\n  - rule: no-such-rule\n    reason: r\n",
    "ignore:\n  - rule: silenced-test\n    reason: r\n    extra: 1\n",
    "review_drafts: sometimes\n",
    "dedup_heading: '   '\n",
    "- just\n- a list\n",
    "limits:\n  max_files: 0\n",
    "limits:\n  max_bytes: 12\n",
    "limits:\n  colour: 1\n",
]


def schema() -> Draft7Validator:
    return Draft7Validator(json.loads(SCHEMA_FILE.read_text()))


def test_the_published_schema_is_the_generated_one_and_covers_every_key_and_rule() -> None:
    assert SCHEMA_FILE.read_text() == schema_text(), "run `ci-stability config schema`"
    data = json.loads(SCHEMA_FILE.read_text())
    Draft7Validator.check_schema(data)
    assert set(data["properties"]) == set(_TOP_KEYS)
    assert set(data["properties"]["rules"]["properties"]) == set(RULES_BY_ID)


@pytest.mark.parametrize("text", VALID)
def test_schema_and_parser_accept_the_same_configs(text: str) -> None:
    parse_config(text, option_specs())
    assert list(schema().iter_errors(yaml.safe_load(text))) == []


@pytest.mark.parametrize("text", INVALID)
def test_schema_and_parser_reject_the_same_configs(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_config(text, option_specs())
    assert list(schema().iter_errors(yaml.safe_load(text))) != []


def test_the_readme_example_config_validates_and_names_the_schema() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Configuration: `.github/ci-stability.yml`", 1)[1]
    text = block.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert "yaml-language-server: $schema=" in text
    parse_config(text, option_specs())
    assert list(schema().iter_errors(yaml.safe_load(text))) == []


def test_config_check_reports_every_error_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yml"
    path.write_text("fail_on: sometimes\nrules:\n  nope: false\n  knob-rationale: loud\n"
                    "ignore:\n  - rule: silenced-test\nbogus: 1\n")
    assert main(["config", "check", str(path)]) == 1
    err = capsys.readouterr().err
    for where in (":1: `fail_on`", ":3: `rules.nope`", ":4: `rules.knob-rationale`",
                  ":6: `ignore[0]`", ":7: `bogus`"):
        assert where in err
    assert err.rstrip().endswith("5 problems")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e",
                    *args], check=True, capture_output=True)


def test_patch_and_pr_reviews_use_the_config_at_the_git_root_and_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".github").mkdir()
    (tmp_path / CONFIG_PATH).write_text("rules:\n  silenced-test: false\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "p.diff").write_text(WORKFLOW_PATCH)
    monkeypatch.chdir(tmp_path / "sub")
    assert main(["review", "--patch", "../p.diff", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "silenced-test" not in {f["rule"] for f in json.loads(out)["findings"]}
    assert f"using the config {tmp_path / CONFIG_PATH}" in err
    (tmp_path / CONFIG_PATH).unlink()
    main(["review", "--patch", "../p.diff", "--format", "json"])
    out, err = capsys.readouterr()
    assert "silenced-test" in {f["rule"] for f in json.loads(out)["findings"]} and err == ""


def test_staged_changes_are_reviewed_with_the_committed_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git(tmp_path, "init", "-q")
    workflow = tmp_path / ".github/workflows/ci.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("jobs:\n  test:\n    runs-on: ubuntu\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    workflow.write_text("jobs:\n  test:\n    continue-on-error: true\n    runs-on: ubuntu\n")
    argv = ["review", "--staged", "--repo", str(tmp_path), "--format", "json"]
    assert main(argv) == 0 and json.loads(capsys.readouterr().out)["findings"] == []
    git(tmp_path, "add", ".")  # now it is staged
    main(argv)
    data = json.loads(capsys.readouterr().out)
    assert "silenced-test" in {f["rule"] for f in data["findings"]}
