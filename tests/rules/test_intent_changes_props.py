"""Property tests for the diff's part in CI-fix intent (rules/analysis/intent/changes.py and
reading.py): repository automation and un-skipping have no failing run; a test or build
file among the changes, or a code change beside the un-skip, keeps the PR a fix; a diff
that only skips tests is a fix; the fix of one's own previous change is not asked for a
duplicate-work check."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from bot.core.snapshot import PullRequestSnapshot
from rules.analysis.intent import follows_up_own_change, read_ci_fix
from rules.analysis.intent.changes import automation_only, only_adds_skips, only_unskips
from tests.conftest import make_snapshot

AUTOMATION_PATHS = (
    ".github/workflows/pr_{s}_command.yml",
    ".github/workflows/bot_{s}_create.yaml",
    ".github/workflows/schedule_stale_{s}.yaml",
    ".github/workflows/{s}_cherry_pick.yml",
    ".github/workflows/auto-label-{s}.yml",
    ".github/scripts/{s}_backport.py",
    ".github/labeler.yml",
    ".github/CODEOWNERS",
)
TEST_PATHS = (
    ".github/workflows/pr_{s}_test.yaml",
    ".github/workflows/labeled_{s}_doctest.yaml",
    ".github/workflows/nightly_{s}.yml",
    "tests/e2e/test_{s}.py",
    "tests/scripts/{s}_command.sh",
)
stem = st.sampled_from(("e2e", "ascend", "gaudi", "a2", "release", "docs"))


def _snapshot(paths: list[str], title: str = "[CI] Fix gh install error", body: str = "",
              base: str = "steps:\n  - run: a\n", head: str = "steps:\n  - run: b\n"
              ) -> PullRequestSnapshot:
    return make_snapshot([{"path": p, "base": base, "head": head} for p in paths], title, body)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(AUTOMATION_PATHS), min_size=1, max_size=4), stem)
def test_automation_alone_has_no_failing_run(templates: list[str], name: str) -> None:
    snapshot = _snapshot([t.format(s=name) for t in templates])
    assert automation_only(snapshot.files)
    assert read_ci_fix(snapshot) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(AUTOMATION_PATHS), max_size=3), st.sampled_from(TEST_PATHS), stem)
def test_a_test_or_build_file_among_the_changes_keeps_it_a_fix(
    templates: list[str], test_path: str, name: str
) -> None:
    snapshot = _snapshot([t.format(s=name) for t in (*templates, test_path)])
    assert not automation_only(snapshot.files)
    reading = read_ci_fix(snapshot)
    assert reading is not None and not reading.tentative


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(AUTOMATION_PATHS), stem,
       st.sampled_from(("The e2e tests fail in every PR since the command broke.",
                        "test_attention fails because the bot checks out the wrong ref.")))
def test_automation_with_a_named_failing_test_is_tentative(
    template: str, name: str, body: str
) -> None:
    reading = read_ci_fix(_snapshot([template.format(s=name)], body=body))
    assert reading is not None and reading.tentative


MARKERS = (
    '@pytest.mark.skip(reason="fix me")\n',
    "@pytest.mark.skipif(not has_npu(), reason='needs NPU')\n",
    "@pytest.mark.skipif(\n    True,\n    reason=\"broken since v0.15\",\n)\n",
    "@pytest.mark.xfail(strict=False)\n",
    "@unittest.skip('flaky')\n",
)
TEST = "@pytest.mark.parametrize('n', [1, 2])\ndef test_graph(n):\n    assert run(n)\n"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(MARKERS), min_size=1, max_size=2),
       st.sampled_from(("[CI] Fix e2e test", "[Test] fix test_graph", "ci: fix the A2 nightly")))
def test_deleting_only_skip_markers_is_an_unskip(markers: list[str], title: str) -> None:
    base = "import pytest\n\n\n" + "".join(markers) + TEST
    snapshot = make_snapshot([{"path": "tests/e2e/test_graph.py", "base": base,
                               "head": "import pytest\n\n\n" + TEST}], title)
    assert only_unskips(snapshot.files)
    assert read_ci_fix(snapshot) is None


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(MARKERS), st.sampled_from(("    assert run(n) == 2\n", "# unstable\n")))
def test_an_unskip_with_any_other_change_is_not_only_an_unskip(marker: str, other: str) -> None:
    base = "import pytest\n\n\n" + marker + TEST
    head = "import pytest\n\n\n" + TEST + other
    snapshot = make_snapshot([{"path": "tests/e2e/test_graph.py", "base": base, "head": head}],
                             "[CI] Fix e2e test")
    assert not only_unskips(snapshot.files)
    assert read_ci_fix(snapshot) is not None


FOLLOW_UPS = (
    ("[GITHUB ACTION] quick fix for last update to pre-merge", ""),
    ("[CI] fix for the previous change to the nightly", ""),
    ("[CI] Fix the nightly path", "Follow-up to #4521: the job still used the old path."),
    ("ci: small fix", "### What this PR does?\nFollow-up of my PR #77, which missed a case."),
    ("[CI] fixup for yesterday's commit", "The gate is red."),
)
NOT_FOLLOW_UPS = (
    ("[CI] Fix nightly test broken by #4521", "Regressed by #4521."),
    ("[CI] Fix for the previous upstream commit", "The e2e test fails."),
    ("[CI] Fix flaky test_attention", "The last update of vLLM made it flaky."),
)


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(FOLLOW_UPS))
def test_a_fix_of_the_previous_change_is_a_follow_up(text: tuple[str, str]) -> None:
    assert follows_up_own_change(*text)


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(NOT_FOLLOW_UPS))
def test_naming_the_culprit_is_not_a_follow_up(text: tuple[str, str]) -> None:
    assert not follows_up_own_change(*text)


SKIP_TITLES = ("Skip test_graph on A2", "CI: skip tests on gfx942", "[CI] test_graph on A2",
               "Gate the graph test on A2")
STEP = "jobs:\n  t:\n    steps:\n      - name: Test\n{cond}        run: pytest tests\n"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(MARKERS), min_size=1, max_size=2), st.sampled_from(SKIP_TITLES))
def test_a_diff_that_only_adds_skip_markers_is_a_fix(markers: list[str], title: str) -> None:
    head = "import pytest\n\n\n" + "".join(markers) + TEST
    snapshot = make_snapshot([{"path": "tests/e2e/test_graph.py",
                               "base": "import pytest\n\n\n" + TEST, "head": head}], title)
    assert only_adds_skips(snapshot.files)
    assert read_ci_fix(snapshot) is not None


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(SKIP_TITLES),
       st.sampled_from(("if: ${{ matrix.arch == 'gfx950' }}", "if: false",
                        "if: ${{ !inputs.a2 }}")))
def test_a_diff_that_only_adds_a_step_condition_is_a_fix(title: str, cond: str) -> None:
    snapshot = classify_snapshot(make_snapshot(
        [{"path": ".github/workflows/release.yml", "base": STEP.format(cond=""),
          "head": STEP.format(cond=f"        {cond}\n")}], title), Config())
    assert only_adds_skips(snapshot.files)
    assert read_ci_fix(snapshot) is not None


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(("run_gemma_test", "run_mla_test", "pytest tests/e2e/test_dp.py")))
def test_commenting_out_a_test_call_is_only_a_skip(call: str) -> None:
    base = f"run_all() {{\n    run_basic\n    {call}\n}}\n"
    head = f"run_all() {{\n    run_basic\n    # {call}\n}}\n"
    for path, skips in (("tests/ci.sh", True), ("src/serve.sh", False)):
        snapshot = classify_snapshot(make_snapshot(
            [{"path": path, "base": base, "head": head}], "[CI] test update"), Config())
        # In product code a commented-out line turns off a feature, not a test.
        assert only_adds_skips(snapshot.files) is skips, path


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(MARKERS), st.sampled_from(SKIP_TITLES),
       st.sampled_from(("    assert run(n) == 2\n", "import os\n")))
def test_a_skip_beside_any_other_change_is_not_skip_only(marker: str, title: str,
                                                         other: str) -> None:
    snapshot = make_snapshot([{"path": "tests/e2e/test_graph.py",
                               "base": "import pytest\n\n\n" + TEST,
                               "head": "import pytest\n\n\n" + marker + TEST + other}], title)
    assert not only_adds_skips(snapshot.files)
    assert read_ci_fix(snapshot) is None


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(MARKERS),
       st.sampled_from(("Skip test_graph on forks", "[CI] Add logging to test_graph",
                        "Skip the docs build")))
def test_a_skip_the_title_calls_other_work_is_not_a_fix(marker: str, title: str) -> None:
    snapshot = make_snapshot([{"path": "tests/e2e/test_graph.py",
                               "base": "import pytest\n\n\n" + TEST,
                               "head": "import pytest\n\n\n" + marker + TEST}], title)
    assert read_ci_fix(snapshot) is None
