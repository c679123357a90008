"""Property tests: threshold-loosening never raises and only points at added lines."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import Config
from bot.engine import classify_snapshot
from rules.base import RuleContext
from rules.threshold_loosening import ThresholdLoosening
from tests.conftest import make_snapshot

FRAGMENTS = [
    "server_args: >-", "  --max-num-batched-tokens 32768  # keep 32K", "  --max-model-len",
    "  4096", "max_concurrency: 100", "accuracy_threshold: 0.9", '    "--mem-fraction-static",',
    '    "0.3",', '    extra_args=["--batch-size", "4", "--mem-fraction-static", "0.2"],',
    "    min_throughput=40,", "TIMEOUT = 600", "timeout=2 * 60)", "# because it OOMs", "  - |",
    "  - --tp", "  - '2'", "def test_x(self):", "class T:", "value: 0.5", "- name: gsm8k",
    "{ config: x, shard: 1, num_shards: 2 }", "--timeout=", '"--x", ', "= =", ":", "\\", "",
    "\ufffd\x00", "x" * 300,
]
PATHS = [
    "tests/evals/gsm8k/configs/a.yaml", "test/registered/cpu/test_a.py", ".buildkite/p.yaml",
    ".github/workflows/w.yml", "scripts/ci/run.sh", "docker/Dockerfile.xeon",
]
lines = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40)), max_size=25)


def run(
    rule: ThresholdLoosening, files: list[dict[str, Any]], body: str, patch_only: bool
) -> None:
    snapshot = classify_snapshot(make_snapshot(files, "t", body, patch_only), Config())
    ctx = RuleContext(snapshot, Config(), rule.id, dict(rule.options))
    by_path = {f.path: f for f in snapshot.files}
    for finding in rule.check(ctx):
        assert finding.path in by_path
        if finding.line is not None:
            assert finding.line in by_path[finding.path].added_line_numbers, finding


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS), lines, lines, st.text(max_size=80), st.booleans())
def test_texts_never_raise_and_point_at_added_lines(
    path: str, base: list[str], head: list[str], body: str, patch_only: bool
) -> None:
    files = [{"path": path, "base": "\n".join(base) + "\n", "head": "\n".join(head) + "\n"}]
    run(ThresholdLoosening(), files, body, patch_only)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(PATHS), st.text(max_size=400))
def test_raw_patches_never_raise(path: str, patch: str) -> None:
    run(ThresholdLoosening(), [{"path": path, "patch": "@@ -1,3 +1,3 @@\n" + patch}], "", True)


GATES = st.sampled_from([
    "assert acc > {v}", "assert {v} <= acc", "self.assertGreater(m['score'], {v})",
    "self.assertLess(", "    lat, {v}", ")", "rtol={v}, atol={v})", "timeout-minutes: {v}",
    "num_questions: {v}", "limit: {v}", "value: {v}", "timeout: {v}m",
])
NUMBERS = st.one_of(st.integers(-5, 10**6).map(str), st.floats(allow_nan=True).map(repr),
                    st.sampled_from(["1e-3", "0.9", "x", "${{ a }}", "1_000", ".5"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(GATES, NUMBERS, NUMBERS), max_size=12))
def test_gates_and_numbers(items: list[tuple[str, str, str]]) -> None:
    base = "\n".join(t.format(v=a) for t, a, _ in items) + "\n"
    head = "\n".join(t.format(v=b) for t, _, b in items) + "\n"
    for path in ("test/registered/cpu/test_a.py", "tests/evals/gsm8k/configs/a.yaml"):
        for patch_only in (False, True):
            run(ThresholdLoosening(), [{"path": path, "base": base, "head": head}], "", patch_only)
