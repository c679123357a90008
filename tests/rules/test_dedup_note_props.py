"""Property tests for dedup-note: any PR text is survivable; findings are PR-level."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from rules.analysis.prtext import dedup_evidence
from rules.base import RuleContext
from rules.dedup_note import DedupNote
from tests.conftest import make_snapshot

RULE = DedupNote()
WORDS = st.sampled_from((
    "[CI]", "[CI/Build]", "Fix", "flaky", "stabilize", "OOM", "timeout", "test_x", "CI", "eval",
    "#50791", "unrelated", "regressed by", "Closes", "## Duplicate-work check", "\n", "```",
    "> ", "<!--", "-->", "**Related PRs**", "https://github.com/o/r/issues/1", "Bump",
    "actions/checkout", "not a duplicate", "different", "(", ")", "—", "- ", ".",
))
prose = st.lists(st.one_of(WORDS, st.text(max_size=10)), max_size=60).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(prose, prose, st.text(max_size=60))
def test_any_text_is_survivable_and_findings_are_pr_level(
    title: str, body: str, heading: str
) -> None:
    files = [{"path": "tests/evals/gsm8k/configs/A.yaml", "base": "a: 1\n", "head": "a: 2\n"}]
    snapshot = classify_snapshot(make_snapshot(files, title, body), Config())
    for config in (Config(), Config(dedup_heading=heading)):
        ctx = RuleContext(snapshot, config, RULE.id, {})
        for finding in RULE.check(ctx):
            assert finding.path is None and finding.line is None


def test_huge_description_is_fast() -> None:
    body = "Fix flaky CI. " + "x ```\n> #1 " * 1_000_000
    files = [{"path": "tests/evals/gsm8k/configs/A.yaml", "base": "a: 1\n", "head": "a: 2\n"}]
    snapshot = classify_snapshot(make_snapshot(files, "[CI] Fix flaky eval", body), Config())
    assert len(list(RULE.check(RuleContext(snapshot, Config(), RULE.id, {})))) == 1


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(("moe refactor", "the API change", "upstream rework")),
       st.integers(min_value=1000, max_value=99999))
def test_the_change_that_broke_it_is_not_a_duplicate_check(change: str, number: int) -> None:
    url = f"https://github.com/vllm-project/vllm/pull/{number}"
    root_cause = f"After {change} in {url}, parameter use_marlin was replaced by fp8_backend."
    assert dedup_evidence(root_cause, Config().dedup_heading) is None
    verdict = f"#{number} — a different workspace, not a duplicate."
    assert dedup_evidence(verdict, Config().dedup_heading) is not None
