"""Property tests for runtime-download."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rules.runtime_download import RuntimeDownload, detect
from tests.rules.props_kit import added_lines_property, no_hang, run_on_file

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


test_never_raises_and_only_flags_added_lines = added_lines_property(RULE, LINE, PATHS)


@given(st.text(max_size=200), st.booleans())
def test_detect_is_total(text: str, python: bool) -> None:
    detect(text, python)


def test_hostile_lines_stay_fast() -> None:
    with no_hang():
        _hostile_runs()


def _hostile_runs() -> None:
    for text in (
        "curl " + "-v x" * 50_000,
        "wget " + "a" * 300_000,
        " -v " + "c" * 250 + ":" + " -v /data" * 40_000,
        "load_dataset(" + "(" * 100_000,
        "git clone " + "d" * 300_000,
        "\n".join("    " * (i % 3) + "curl https://x.org/a.tar" for i in range(3_000)),
    ):
        run_on_file(RULE, ".github/workflows/ci.yml", "", text, False)
        run_on_file(RULE, "tests/test_y.py", "", text, True)
