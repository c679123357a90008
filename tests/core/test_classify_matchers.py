"""`classify` with one regex per surface answers as testing each glob in order does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.globs import glob_match
from bot.core.surfaces import _DEFAULT_GLOBS, NOT_SURFACES, RENDERED, classify, surface_table


def _glob_by_glob(path: str, table: Mapping[str, Sequence[str]]) -> str | None:
    vetoed: bool | None = None
    for surface, globs in table.items():
        for glob in globs:
            if not glob_match(glob, path):
                continue
            if glob in _DEFAULT_GLOBS:
                if vetoed is None:
                    vetoed = any(glob_match(veto, path) for veto in NOT_SURFACES) and not any(
                        glob_match(rendered, path) for rendered in RENDERED)
                if vetoed:
                    continue
            return surface
    return None


SEGMENT = st.sampled_from([
    ".github", "workflows", "ci.yml", "tests", "test", "evals", "configs", "m.yaml", "docs",
    "README.md", "report_template.md", "test_x.py", "x_test.py", "conftest.py", "Dockerfile",
    "docker", "run.sh",
    ".buildkite", "pipeline.yaml", "ISSUE_TEMPLATE", "dependabot.yml", "lm-eval", "a.png",
    "scripts", "ci", "x.py", "accuracy.json", ".jenkins", "Jenkinsfile", "bench.sh"])
PATH = st.lists(SEGMENT, min_size=1, max_size=5).map("/".join)
EXTRA = st.dictionaries(
    st.sampled_from(["test", "workflow", "eval-config", "mine"]),
    st.lists(st.sampled_from(["docs/**", "**/*.md", "scripts/*.sh", "**/test_*.py", "x.py",
                              "**/README.md", ".github/**"]), max_size=3),
    max_size=3)


@settings(max_examples=400, deadline=None)
@given(PATH, EXTRA)
def test_classify_equals_testing_each_glob(path: str, extra: dict[str, list[str]]) -> None:
    table = surface_table(extra)
    assert classify(path, table) == _glob_by_glob(path, table)
