"""Surfaces by path and content: what a CI run uses is a surface, what it merely names is not.

Each case is a class of misclassification seen on repositories the rules had never met
(eval/sweep.md): library modules named in a workflow's `paths:` trigger filter, a file a
changed-files step lists, a path held in a lint step's variable, training configs with a
`model:` mapping and a flag that shares a word with a gate, READMEs and issue templates.
"""

from __future__ import annotations

import dataclasses

import pytest

from bot.core.invocations import invoked_paths
from bot.core.repo_view import MappedRepoView
from bot.core.surfaces import classify, classify_files, surface_table
from tests.conftest import make_snapshot

TABLE = surface_table()

WORKFLOW = """\
name: e2e
on:
  pull_request:
    paths:
      - "**/*.py"
      - "trainer/main_ppo.py"
      - "!trainer/workers/fsdp_workers.py"
      - "trainer/config/ppo_trainer.yaml"
    paths-ignore: [docs/build.py]
jobs:
  e2e:
    runs-on: [self-hosted]
    steps:
      - uses: actions/cache@v4
        with:
          key: ${{ hashFiles('requirements/gpu.py') }}
      - uses: tj-actions/changed-files@v45
        with:
          files: |
            configs/model_list.yaml
            kernels/**/*.py
      - name: Check that the worker stays in sync
        run: |
          WORKER_FILE="trainer/workers/policy_worker.py"
          git diff --name-only origin/main | grep -q "$WORKER_FILE" && echo changed
      - name: Lint
        run: tools/lint_docs.sh
      - name: Merge checkpoints
        run: python scripts/merge.py --backend fsdp && bash -x scripts/after.sh
      - name: Train
        run: |
          PYTHONUNBUFFERED=1 uv run coverage run -a --source=pkg \\
              "$ROOT"/examples/run_grpo.py \\
              --config $ROOT/examples/configs/grpo_small.yaml \\
              policy.model_name=org/tiny
      - name: Eval
        run: cd bench && ./run_bench.sh --cfg=bench/configs/gsm8k.yaml
"""


def _kinds(files: list[dict[str, str]], ci: str = WORKFLOW) -> dict[str, str | None]:
    snapshot = make_snapshot(files)
    view = MappedRepoView({".github/workflows/e2e.yml": ci})
    snapshot = dataclasses.replace(snapshot, repo_view=view)
    return {f.path: s for f, s in zip(snapshot.files, classify_files(snapshot.files, TABLE,
                                                                     snapshot.repo_view),
                                      strict=True)}


def _py(path: str) -> dict[str, str]:
    return {"path": path, "base": "x = 1\n", "head": "x = 2\n"}


@pytest.mark.parametrize("path", [
    "trainer/main_ppo.py",                 # a `paths:` trigger filter entry
    "trainer/workers/fsdp_workers.py",     # a negated filter entry
    "docs/build.py",                       # a flow-style `paths-ignore:` list
    "kernels/attn.py",                     # matched by a changed-files glob
    "trainer/workers/policy_worker.py",    # held in a variable the step greps for
    "requirements/gpu.py",                 # hashed into a cache key
])
def test_named_but_not_run_is_not_a_surface(path: str) -> None:
    assert _kinds([_py(path)])[path] is None


@pytest.mark.parametrize(("path", "surface"), [
    ("tools/lint_docs.sh", "ci-script"),           # the command itself
    ("scripts/merge.py", "ci-script"),             # after `python`
    ("scripts/after.sh", "ci-script"),             # after `&& bash -x`
    ("examples/run_grpo.py", "ci-script"),         # a continued `uv run coverage run` line
    ("examples/configs/grpo_small.yaml", "ci-config"),  # after `--config`
    ("bench/configs/gsm8k.yaml", "ci-config"),     # `--cfg=…`
])
def test_run_or_passed_to_a_program_is_a_surface(path: str, surface: str) -> None:
    assert _kinds([{"path": path, "base": "a: 1\n", "head": "a: 2\n"}])[path] == surface


def test_filter_file_list_is_skipped_but_the_step_after_it_is_read() -> None:
    words = set(invoked_paths(WORKFLOW))
    assert "configs/model_list.yaml" not in words
    assert "trainer/config/ppo_trainer.yaml" not in words
    assert "tools/lint_docs.sh" in words


@pytest.mark.parametrize("text", [
    "pipeline { stages { stage('t') { steps { sh 'bash ci/nightly/run.sh' } } } }\n",
    "steps:\n  - label: t\n    command: \"bash ci/nightly/run.sh\"\n",
    "test:\n  script:\n    - ./ci/nightly/run.sh\n",
    "matrix:\n  include:\n    - script: ci/nightly/run.sh\n",
])
def test_jenkins_buildkite_gitlab_and_matrix_invocations(text: str) -> None:
    assert "ci/nightly/run.sh" in set(invoked_paths(text))


TRAINING_CONFIG = """\
model:
  path: org/base
  num_key_value_heads: 8
algorithm:
  use_leave_one_out_baseline: true
  cliprange_value: 0.5
  kl_baseline_coef: 0.1
"""


def _config_kind(text: str, path: str = "recipes/run.yaml") -> str | None:
    return _kinds([{"path": path, "base": text.replace("0.5", "0.4"), "head": text}],
                  ci="jobs: {}\n")[path]


def test_training_config_sharing_words_with_gates_is_not_an_eval_config() -> None:
    assert _config_kind(TRAINING_CONFIG) is None
    assert _config_kind("model_name: org/tiny\nuse_baseline: false\n") is None


@pytest.mark.parametrize("text", [
    "model_name: org/tiny\naccuracy_threshold: 0.5\n",
    "model_name: \"org/tiny\"\ntasks:\n  - name: gsm8k\n    metrics:\n"
    "      - name: exact_match\n        value: 0.5\n",
    "model: org/tiny\nexpected_gsm8k: 0.5\n",
    "{\"model_id\": \"org/tiny\", \"rtol\": 0.5}\n",
    "model: org/tiny\nbaseline:\n  gsm8k: 0.5\n",
])
def test_model_with_a_numeric_gate_is_an_eval_config(text: str) -> None:
    path = "recipes/run.json" if text.startswith("{") else "recipes/run.yaml"
    assert _config_kind(text, path) == "eval-config"


@pytest.mark.parametrize("path", [
    "docker/README.md", "tests/README.md", ".github/ISSUE_TEMPLATE/bug.yml",
    ".github/dependabot.yml", ".github/labeler.yml", "tests/data/plot.png",
])
def test_prose_templates_and_bot_configs_are_not_surfaces(path: str) -> None:
    assert classify(path, TABLE) is None


@pytest.mark.parametrize("path", [
    "tests/e2e/models/report_template.md", "test/accuracy/Summary_Template.md",
])
def test_a_markdown_template_a_test_renders_is_a_test_surface(path: str) -> None:
    assert classify(path, TABLE) == "test"


@pytest.mark.parametrize("path", ["docs/report_template.md", ".github/PULL_REQUEST_TEMPLATE.md",
                                  "tests/e2e/models/README.md"])
def test_templates_outside_test_trees_stay_prose(path: str) -> None:
    assert classify(path, TABLE) is None


@pytest.mark.parametrize(("path", "surface"), [
    ("docker/requirements.txt", "container"), ("docker/gpu/Dockerfile", "container"),
    (".github/zizmor.yml", "ci-config"), (".github/workflows/a.yml", "workflow"),
])
def test_build_inputs_and_ci_configs_stay_surfaces(path: str, surface: str) -> None:
    assert classify(path, TABLE) == surface


def test_a_repository_glob_still_claims_a_vetoed_file() -> None:
    table = surface_table({"ci-config": [".github/labeler.yml"]})
    assert classify(".github/labeler.yml", table) == "ci-config"
