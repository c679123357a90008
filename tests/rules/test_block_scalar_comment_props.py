"""Property tests for block-scalar-comment (and the yamlscan module it stands on)."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import Config
from bot.engine import classify_snapshot
from rules.base import RuleContext
from rules.block_scalar_comment import BlockScalarComment, comment_start
from rules.support.yamlscan import scan
from tests.conftest import make_snapshot

RULE = BlockScalarComment()
VOCAB = [
    "server_args: >-", "server_args: |", "args: |2-", "run: >", "run: |", "command: >+",
    "- >-", "  - >-", "commands:", "steps:", "- label: x", "  with:", "    args: |",
    "  --max-num-batched-tokens 32768  # keep 32K", "  # comment", "    # deeper", "  #123",
    "  'cd tests &&", "  pytest x # y'", "env:", "  A: 1", "---", "...", "", "   ", "\t#",
    "key: 'quoted # not' # real", 'k: "a\\"b" # c', "? complex", "- - nested", "-", "  -",
    "a:b", "x: !!str >", "y: &anchor |", "z: >9", "  http://x/#frag", "\ufffd\ufffd: >",
]
LINE = st.one_of(st.sampled_from(VOCAB), st.text(max_size=60))
PATHS = st.sampled_from([
    "tests/evals/gsm8k/configs/x.yaml", ".buildkite/test-pipeline.yaml",
    ".github/workflows/ci.yml", "tests/evals/x.json",
])


def _run(path: str, base: str, head: str, patch_only: bool) -> None:
    snapshot = classify_snapshot(
        make_snapshot([{"path": path, "base": base, "head": head}], patch_only=patch_only),
        Config())
    ctx = RuleContext(snapshot, Config(), RULE.id, RULE.options)
    findings = list(RULE.check(ctx))
    added = {f.path: f.added_line_numbers for f in snapshot.files}
    for finding in findings:
        assert finding.line in added[finding.path]
        assert finding.end_line is None or finding.end_line in added[finding.path]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(LINE, max_size=30), st.lists(st.booleans(), max_size=30), PATHS, st.booleans())
def test_never_raises_and_only_flags_added_lines(
    lines: list[str], keep: list[bool], path: str, patch_only: bool
) -> None:
    head = "\n".join(lines)
    base = "\n".join(line for line, k in zip(lines, keep, strict=False) if k)
    _run(path, base, head, patch_only)


@given(st.text(max_size=200))
def test_comment_start_is_total(text: str) -> None:
    at, quote = comment_start(text)
    assert at == -1 or text[at] == "#"
    assert quote in ("", "'", '"')


def test_scan_is_linear_on_hostile_input() -> None:
    hostile = [
        "a" + " " * 200_000 + "b",
        ":" * 200_000,
        " #" * 100_000,
        "- " * 100_000,
        "key: >-\n" + ("  x # y\n" * 20_000),
        "\n".join(" " * (i % 400) + "k: v" for i in range(20_000)),
    ]
    for text in hostile:
        started = time.perf_counter()
        scan(enumerate(text.splitlines(), start=1))
        _run("tests/evals/gsm8k/configs/x.yaml", "", text, False)
        assert time.perf_counter() - started < 5, text[:40]
