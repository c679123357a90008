"""silenced-test's expansion of matrix values, literal loops and make recipes, and its
reading of a description that accounts for a removal."""

from __future__ import annotations

from rules.analysis.prtext import description_relocates
from rules.silenced_test.backends import new_backends, platforms_named
from rules.silenced_test.expansion import MakeTargets, expanded
from rules.silenced_test.silencing_detectors import SILENCE_REASON_RE
from tests.conftest import make_snapshot

_WORKFLOW = """\
jobs:
  a:
    strategy:
      matrix:
        suite: [core, cli]
    steps:
      - run: pytest tests/${{ matrix.suite }}
  b:
    strategy:
      matrix:
        include:
          - target: test_big
    steps:
      - run: |
          for t in ${{ matrix.target }} test_extra; do
            make $t
          done
"""


def test_matrix_values_stay_within_their_job() -> None:
    lines = [t.strip() for t in expanded(_WORKFLOW.splitlines())]
    assert "- run: pytest tests/core" in lines
    assert "- run: pytest tests/cli" in lines
    assert "make test_big" in lines and "make test_extra" in lines
    assert not any("tests/test_big" in t for t in lines)  # job b's matrix is not job a's


def test_loop_over_a_computed_list_is_not_expanded() -> None:
    lines = expanded(["for f in $(ls tests); do", "  pytest $f", "done"])
    assert lines == ["for f in $(ls tests); do", "  pytest $f", "done"]


def test_make_recipe_closure() -> None:
    make = MakeTargets("test_core:\n\tpytest tests/core\n\ntest: lint\n"
                       "\t@for t in test_core test_cli; do \\\n\t\t$(MAKE) $$t; \\\n\tdone\n"
                       "lint:\n\t$(MAKE) style\n")
    assert make.runs("test", "test_core") and make.runs("test", "test_cli")
    assert make.runs("test", "style")  # through the prerequisite
    assert not make.runs("test_core", "test_cli")


def test_description_relocates_needs_a_removal_a_reason_and_no_failure() -> None:
    subjects = ["make test_integrations", "test_integrations"]
    said = "- Makefile: remove `test_integrations`\n  (a duplicate of test_deepspeed)."
    assert description_relocates(said, subjects, SILENCE_REASON_RE)
    failing = "Remove `test_integrations`, a duplicate that keeps failing."
    assert description_relocates(failing, subjects, SILENCE_REASON_RE) is None
    mention = "It ran twice, via test_deepspeed and test_integrations."
    assert description_relocates(mention, subjects, SILENCE_REASON_RE) is None


def test_new_backends_from_title_or_new_availability_check() -> None:
    files = [{"path": "src/pkg/imports.py", "base": "x = 1\n",
              "head": "x = 1\n\n\ndef is_hpu_available():\n    return True\n"}]
    snapshot = make_snapshot(files, "Refactor imports", "")
    assert new_backends(snapshot.title, snapshot.files) == {"hpu"}
    assert new_backends("Add XPU support", ()) == {"xpu"}
    assert new_backends("Fix flaky ROCm test", ()) == frozenset()
    assert platforms_named("@skipIfRocm") == {"rocm"}
    assert platforms_named("@require_non_hpu") == {"hpu"}
