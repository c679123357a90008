"""Shared harness of the rule property tests: a rule on hostile input never raises and
only points at lines the PR added.

The knob rules (knob-rationale, threshold-loosening, shard-matrix) read the same
fragments, so they share one vocabulary and the same two properties.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from bot.core.findings import Finding
from bot.core.snapshot import ChangedFile
from rules.base import Rule, RuleContext
from tests.conftest import make_snapshot

KNOB_FRAGMENTS = [
    "server_args: >-", "  --max-num-batched-tokens 32768  # keep 32K", "  --max-model-len",
    "  4096", "max_concurrency: 100", "accuracy_threshold: 0.9", '    "--mem-fraction-static",',
    '    "0.3",', '    extra_args=["--batch-size", "4", "--mem-fraction-static", "0.2"],',
    "    min_throughput=40,", "TIMEOUT = 600", "timeout=2 * 60)", "# because it OOMs", "  - |",
    "  - --tp", "  - '2'", "def test_x(self):", "class T:", "value: 0.5", "- name: gsm8k",
    "{ config: x, shard: 1, num_shards: 2 }", "--timeout=", '"--x", ', "= =", ":", "\\", "",
    "\ufffd\x00", "x" * 300,
]
KNOB_PATHS = [
    "tests/evals/gsm8k/configs/a.yaml", "test/registered/cpu/test_a.py", ".buildkite/p.yaml",
    ".github/workflows/w.yml", "scripts/ci/run.sh", "docker/Dockerfile.xeon",
]
knob_lines = st.lists(st.one_of(st.sampled_from(KNOB_FRAGMENTS), st.text(max_size=40)),
                      max_size=25)


def on_diff_line(finding: Finding, changed: ChangedFile) -> bool:
    """On an added line, or (a finding about removed lines) on a head line the diff shows."""
    if finding.line in changed.added_line_numbers:
        return True
    shown = {line.new_no for hunk in changed.hunks for line in hunk.lines}
    return finding.line in shown and any(
        word in finding.message for word in (" removed", " deleted"))


def run_on_files(rule: Rule, files: list[dict[str, Any]], body: str, patch_only: bool) -> None:
    """Findings name a file of the PR and, when they have a line, one of its added lines
    (or, for a removal, the head line the diff shows next to it)."""
    snapshot = classify_snapshot(make_snapshot(files, "t", body, patch_only), Config())
    ctx = RuleContext(snapshot, Config(), rule.id, dict(rule.options))
    by_path = {f.path: f for f in snapshot.files}
    for finding in rule.check(ctx):
        assert finding.path in by_path
        if finding.line is not None:
            assert on_diff_line(finding, by_path[finding.path]), finding


def run_on_file(rule: Rule, path: str, base: str, head: str, patch_only: bool,
                *, end_lines: bool = False) -> None:
    """Every finding on one changed file is on an added line (its end line too, if asked)."""
    snapshot = classify_snapshot(
        make_snapshot([{"path": path, "base": base, "head": head}], patch_only=patch_only),
        Config())
    ctx = RuleContext(snapshot, Config(), rule.id, rule.options)
    findings = list(rule.check(ctx))
    added = {f.path: f.added_line_numbers for f in snapshot.files}
    for finding in findings:
        assert finding.path is not None
        assert finding.line in added[finding.path]
        if end_lines:
            assert finding.end_line is None or finding.end_line in added[finding.path]


PropertyTest = Callable[..., None]


def knob_rule_properties(make_rule: Callable[[], Rule]) -> tuple[PropertyTest, PropertyTest]:
    """The two properties every knob rule has: on texts and on raw patches."""

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(KNOB_PATHS), knob_lines, knob_lines, st.text(max_size=80),
           st.booleans())
    def on_texts(path: str, base: list[str], head: list[str], body: str,
                 patch_only: bool) -> None:
        files = [{"path": path, "base": "\n".join(base) + "\n", "head": "\n".join(head) + "\n"}]
        run_on_files(make_rule(), files, body, patch_only)

    @settings(max_examples=100, deadline=None)
    @given(st.sampled_from(KNOB_PATHS), st.text(max_size=400))
    def on_raw_patches(path: str, patch: str) -> None:
        run_on_files(make_rule(), [{"path": path, "patch": "@@ -1,3 +1,3 @@\n" + patch}], "",
                     True)

    return on_texts, on_raw_patches


def added_lines_property(rule: Rule, line: st.SearchStrategy[str], paths: st.SearchStrategy[str],
                         *, end_lines: bool = False) -> PropertyTest:
    """On head lines drawn from `line`, some kept in the base: never raises, flags added lines."""

    @settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
    @given(st.lists(line, max_size=30), st.lists(st.booleans(), max_size=30), paths,
           st.booleans())
    def on_lines(lines: list[str], keep: list[bool], path: str, patch_only: bool) -> None:
        head = "\n".join(lines)
        base = "\n".join(text for text, k in zip(lines, keep, strict=False) if k)
        run_on_file(rule, path, base, head, patch_only, end_lines=end_lines)

    return on_lines


@contextlib.contextmanager
def no_hang(seconds: int = 120) -> Iterator[None]:
    """Fail, instead of hanging the suite, if hostile input sends a regex into
    catastrophic backtracking. A guard against hangs, not a performance assertion:
    speed is measured in bench/, never asserted in tests."""

    def _fail(_signum: int, _frame: object) -> None:
        raise AssertionError(f"still running after {seconds} s: a runaway regex?")

    previous = signal.signal(signal.SIGALRM, _fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
