"""Property tests for runtime-download."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import Config
from bot.engine import classify_snapshot
from rules.base import RuleContext
from rules.runtime_download import RuntimeDownload, detect
from tests.conftest import make_snapshot

RULE = RuntimeDownload()
VOCAB = [
    "jobs:", "  gnr:", "    steps:", "      - run: |",
    "          wget https://people.eecs.berkeley.edu/~hendrycks/data.tar",
    "          docker run -v $HOME/.cache/sgl_eval:/root/.cache/sgl_eval x",
    "steps:", "- label: x", "  commands:", "  - huggingface-cli download Qwen/Qwen3-0.6B",
    "  env:", "    HF_HOME: /mnt/hf", "    HF_HUB_OFFLINE: 1", "curl -fsSL http://localhost/health",
    "ds = load_dataset('openai/gsm8k')", "urllib.request.urlopen('https://x.org/a.json')",
    "class TestA(CustomTestCase):", "    def test_x(self):", "@pytest.mark.skip",
    "git clone https://huggingface.co/datasets/x/y", "dataset_url: https://x.org/d.tar",
    "", "    ", "#", "---", "- >-", "  'curl https://example.com/a.tar'",
]
LINE = st.one_of(st.sampled_from(VOCAB), st.text(max_size=60))
PATHS = st.sampled_from([
    ".github/workflows/ci.yml", ".buildkite/test-pipeline.yaml", "test/registered/cpu/test_x.py",
    "scripts/ci/run.sh", "tests/evals/mmlu/configs/x.yaml", "tests/test_y.py",
])


def _run(path: str, base: str, head: str, patch_only: bool) -> None:
    snapshot = classify_snapshot(
        make_snapshot([{"path": path, "base": base, "head": head}], patch_only=patch_only),
        Config())
    ctx = RuleContext(snapshot, Config(), RULE.id, RULE.options)
    added = {f.path: f.added_line_numbers for f in snapshot.files}
    for finding in RULE.check(ctx):
        assert finding.line in added[finding.path]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(LINE, max_size=30), st.lists(st.booleans(), max_size=30), PATHS, st.booleans())
def test_never_raises_and_only_flags_added_lines(
    lines: list[str], keep: list[bool], path: str, patch_only: bool
) -> None:
    head = "\n".join(lines)
    base = "\n".join(line for line, k in zip(lines, keep, strict=False) if k)
    _run(path, base, head, patch_only)


@given(st.text(max_size=200), st.booleans())
def test_detect_is_total(text: str, python: bool) -> None:
    detect(text, python)


def test_hostile_lines_stay_fast() -> None:
    for text in (
        "curl " + "-v x" * 50_000,
        "wget " + "a" * 300_000,
        " -v " + "c" * 250 + ":" + " -v /data" * 40_000,
        "load_dataset(" + "(" * 100_000,
        "git clone " + "d" * 300_000,
        "\n".join("    " * (i % 3) + "curl https://x.org/a.tar" for i in range(3_000)),
    ):
        started = time.perf_counter()
        _run(".github/workflows/ci.yml", "", text, False)
        _run("tests/test_y.py", "", text, True)
        assert time.perf_counter() - started < 5
