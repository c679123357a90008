"""Property tests for silenced-test: any input is survivable, findings sit on added lines."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from rules.base import RuleContext
from rules.silenced_test import SilencedTest
from rules.silenced_test.test_commands import Runs, _within
from tests.conftest import make_snapshot
from tests.rules.props_kit import on_diff_line

RULE = SilencedTest()
PATHS = (
    ".buildkite/test-pipeline.yaml",
    ".github/workflows/pr-test-xeon.yml",
    ".github/ci/skip_tests.yaml",
    "test/registered/cpu/test_intel_amx_attention_backend_a.py",
    "tests/v1/engine/test_async_llm.py",
    "tests/conftest.py",
    "tests/evals/gsm8k/configs/models-small.txt",
    ".buildkite/scripts/run-amd-test.sh",
)
FRAGMENTS = (
    "steps:", "- label: LM Eval", "soft_fail: true", "soft_fail:", "- exit_status: -1",
    "retry:", "automatic:", "automatic: true", "limit: 2", "continue-on-error: true",
    "if: ${{ false }}", "skip: flaky", "exclude:", "matrix:", "with:", "disabled_tests:",
    "- test_x", "jobs:", "build:", "- name: Run", "run: |", "commands:",
    "- pytest -v -s x --ignore=x/test_a.py", "pytest -k \"not test_a and not b\"",
    "--deselect a.py::t", "--reruns 3", "--reruns=", "@pytest.mark.skip(reason='flaky')",
    "@pytest.mark.skipif(", "@unittest.skip('x')", "@skipIfRocm", "@flaky", "@retry(",
    "retry(", "pytest.skip('x')", "self.skipTest('x')", "raise unittest.SkipTest", "def test_a():",
    "async def test_b(self):", "class TestC:", "# def test_d():", "# pytest.param(1),",
    "pytest.param(1, marks=pytest.mark.xfail),", "SKIP_TESTS = [", "SKIPPED = ['a', 'b']",
    "collect_ignore = ['x.py']", "skips.append('y')", "'model-a',", "# 'model-a',", "],", ")",
    "@pytest.mark.parametrize('x', [", "register_cpu_ci(", "disabled='flaky',", "pytestmark = ",
    "see #123", "# tracked in #9", "\t", "\ufffd", "'", '"', "[", "{", "#", ":", "- ", "",
)
line = st.builds(
    lambda indent, parts: " " * indent + " ".join(parts),
    st.integers(0, 12),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=4),
)
text = st.lists(line, max_size=30).map("\n".join)


def _check(files: list[dict[str, object]], body: str, patch_only: bool) -> None:
    snapshot = classify_snapshot(make_snapshot(files, "t", body, patch_only=patch_only), Config())
    ctx = RuleContext(snapshot, Config(), RULE.id, dict(RULE.options))
    by_path = {f.path: f for f in snapshot.files}
    for finding in RULE.check(ctx):
        assert finding.path is not None and finding.line is not None
        assert on_diff_line(finding, by_path[finding.path]), finding


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS), text, text, st.text(max_size=200), st.booleans())
def test_texts_never_raise_and_findings_are_on_added_lines(
    path: str, base: str, head: str, body: str, patch_only: bool
) -> None:
    _check([{"path": path, "base": base, "head": head}], body, patch_only)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PATHS), st.text(max_size=400), st.booleans())
def test_arbitrary_patches_never_raise(path: str, patch: str, added: bool) -> None:
    _check([{"path": path, "patch": "@@ -1,2 +1,3 @@\n" + patch,
             "status": "added" if added else "modified"}], "", True)


def test_huge_file_is_linear() -> None:
    head = "\n".join(f"    \"test_{i}\",  # --ignore=x{i}" for i in range(100_000))
    files = [{"path": "tests/skips.py", "base": "SKIP_TESTS = [\n]\n",
              "head": "SKIP_TESTS = [\n" + head + "\n]\n"}]
    _check(files, "", False)


TEST_PATH = st.from_regex(r"tests/[a-z]{1,6}/test_[a-z]{1,8}\.py", fullmatch=True)


def _silenced(files: list[dict[str, object]], title: str = "t") -> list[str]:
    snapshot = classify_snapshot(make_snapshot(files, title, "", patch_only=False), Config())
    ctx = RuleContext(snapshot, Config(), RULE.id, dict(RULE.options))
    return [f.message for f in RULE.check(ctx)]


@settings(max_examples=60, deadline=None)
@given(TEST_PATH, TEST_PATH, st.booleans())
def test_a_test_command_moved_to_another_ci_file_is_not_removed(
    kept: str, moved: str, renamed: bool
) -> None:
    """Removing `pytest <moved>` is silencing only when nothing of the PR runs it again."""
    if kept == moved:
        return
    script = {"path": "tests/ci/run_unit.sh", "base": f"pytest {kept}\npytest {moved}\n",
              "head": f"pytest {kept}\n"}
    other: dict[str, object] = (
        {"path": moved.replace("tests/", "tests/moved/"), "previous_path": moved,
         "status": "renamed", "base": "def test_x():\n    pass\n",
         "head": "def test_x():\n    pass\n"}
        if renamed else
        {"path": "tests/ci/run_more.sh", "status": "added", "head": f"pytest -x {moved}\n"})
    assert not [m for m in _silenced([script, other]) if " removed" in m]
    # Without the other file the same removal is reported.
    assert [m for m in _silenced([script]) if f"pytest {moved}` removed" in m]


SCOPE_PART = st.sampled_from(["tests", "unit", "e2e", "test_a.py", "test_b.py", "TestX", "t"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(SCOPE_PART, min_size=1, max_size=4), st.booleans(),
                          st.lists(SCOPE_PART, min_size=1, max_size=4)), max_size=6),
       st.lists(SCOPE_PART, min_size=1, max_size=5), st.booleans())
def test_indexed_runs_agree_with_scanning_every_command(
    commands: list[tuple[list[str], bool, list[str]]], target: list[str], node: bool
) -> None:
    """`Runs.runs` looks targets up by their ancestors; it answers as a scan would."""
    def path(parts: list[str], as_node: bool) -> str:
        return "/".join(parts) if not as_node or len(parts) < 2 else \
            "/".join(parts[:-1]) + "::" + parts[-1]
    lines = [f"pytest {path(p, n)} --ignore={path(i, False)}" for p, n, i in commands]
    runs = Runs.of(lines)
    wanted = path(target, node)
    scanned = any(any(_within(wanted, p) for p in paths) and
                  not any(_within(wanted, i) for i in ignores)
                  for _, paths, ignores in runs.commands)
    assert runs.runs("pytest x", wanted) == scanned
