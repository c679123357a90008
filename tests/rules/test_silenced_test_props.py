"""Property tests for silenced-test: any input is survivable, findings sit on added lines."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from rules.base import RuleContext
from rules.silenced_test import SilencedTest
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
