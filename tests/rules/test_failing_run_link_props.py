"""Property tests for failing-run-link: any PR text is survivable; findings are PR-level."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from rules.base import RuleContext
from rules.failing_run_link import FailingRunLink
from tests.conftest import make_snapshot

RULE = FailingRunLink()
WORDS = st.sampled_from((
    "[CI]", "Fix", "flaky", "deflake", "OOM", "timeout", "test_x", "CI", "Buildkite #81913",
    "https://buildkite.com/vllm/ci/builds/1", "https://circleci.com/", "/job/x/", "run 123456789",
    "```", "Traceback (most recent call last)", "Error:", "FAILED", "> ", "`", "passed 50/50",
    "\n", "<!--", "hud.pytorch.org", "https://", "-/pipelines/", "#", ".",
))
prose = st.lists(st.one_of(WORDS, st.text(max_size=10)), max_size=60).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(prose, prose)
def test_any_text_is_survivable_and_findings_are_pr_level(title: str, body: str) -> None:
    files = [{"path": ".buildkite/test-pipeline.yaml", "base": "a: 1\n", "head": "a: 2\n"}]
    snapshot = classify_snapshot(make_snapshot(files, title, body), Config())
    for finding in RULE.check(RuleContext(snapshot, Config(), RULE.id, {})):
        assert finding.path is None and finding.line is None


def test_pathological_urls_are_fast() -> None:
    body = "https://circleci.com/" + "a" * 200_000 + " https://x/" + "job/" * 50_000
    files = [{"path": ".buildkite/test-pipeline.yaml", "base": "a: 1\n", "head": "a: 2\n"}]
    snapshot = classify_snapshot(make_snapshot(files, "[CI] Fix flaky eval", body), Config())
    assert len(list(RULE.check(RuleContext(snapshot, Config(), RULE.id, {})))) == 1
