"""Property tests for block-scalar-comment (and the yamlscan module it stands on)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rules.analysis.yamlscan.scanner import scan
from rules.block_scalar_comment import BlockScalarComment, comment_start
from tests.rules.props_kit import added_lines_property, run_on_file

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


test_never_raises_and_only_flags_added_lines = added_lines_property(
    RULE, LINE, PATHS, end_lines=True)


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
        scan(enumerate(text.splitlines(), start=1))
        run_on_file(RULE, "tests/evals/gsm8k/configs/x.yaml", "", text, False, end_lines=True)
