"""Property tests for allocator-scope: any input is survivable, findings sit on added lines."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from rules.allocator_scope import AllocatorScope
from rules.base import RuleContext
from tests.conftest import make_snapshot
from tests.rules.props_kit import no_hang

RULE = AllocatorScope()
VOCAB = [
    "env:", "  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True",
    '  PYTORCH_CUDA_ALLOC_CONF: "expandable_segment:True"', "jobs:", "  build:", "    env:",
    "      PYTORCH_HIP_ALLOC_CONF: max_split_size_mb:abc,,x", "    steps:", "      - run: |",
    "          export PYTORCH_CUDA_ALLOC_CONF=backend:cudamallocasync",
    '          echo "PYTORCH_NPU_ALLOC_CONF=a=b" >> $GITHUB_ENV', "steps:", "- label: x",
    "  commands:", "  - pytest --config-list-file=configs/a.txt",
    'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "roundup_power2_divisions:[256:1,>:3"',
    'os.environ.setdefault("PYTORCH_ALLOC_CONF", f"{x}")',
    "    monkeypatch.setenv('PYTORCH_CUDA_ALLOC_CONF', 'garbage_collection_threshold:2')",
    'torch.cuda.memory._set_allocator_settings("pinned_num_register_threads:3")',
    "@pytest.fixture(scope='session', autouse=True)", "def fx():", "class T:",
    "ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\", "ENV PYTORCH_CUDA_ALLOC_CONF x",
    "PYTORCH_CUDA_ALLOC_CONF=", "PYTORCH_CUDA_ALLOC_CONF=:", "PYTORCH_CUDA_ALLOC_CONF='[]'",
    '"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:1",', "", "    ", "#", "---",
]
LINE = st.one_of(st.sampled_from(VOCAB), st.text(max_size=60))
PATHS = st.sampled_from([
    ".github/workflows/ci.yml", ".buildkite/test-pipeline.yaml", "tests/conftest.py",
    "tests/evals/gsm8k/configs/x.yaml", "docker/Dockerfile", ".buildkite/scripts/run.sh",
    "python/sglang/test/test_utils.py", "test/registered/cpu/test_x.py", "tests/evals/a.json",
])


def _run(path: str, base: str, head: str, patch_only: bool, body: str = "") -> None:
    snapshot = classify_snapshot(
        make_snapshot([{"path": path, "base": base, "head": head}], body=body,
                      patch_only=patch_only), Config())
    ctx = RuleContext(snapshot, Config(), RULE.id, RULE.options)
    added = {f.path: f.added_line_numbers for f in snapshot.files}
    for finding in RULE.check(ctx):
        assert finding.line in added[finding.path]
        assert finding.end_line is None


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(LINE, max_size=30), st.lists(st.booleans(), max_size=30), PATHS, st.booleans(),
       st.text(max_size=100))
def test_never_raises_and_only_flags_added_lines(
    lines: list[str], keep: list[bool], path: str, patch_only: bool, body: str
) -> None:
    head = "\n".join(lines)
    base = "\n".join(line for line, k in zip(lines, keep, strict=False) if k)
    _run(path, base, head, patch_only, body)


@given(st.text(max_size=120))
def test_any_value_validates_without_raising(value: str) -> None:
    from rules.allocator_scope.allocconf import OPTIONS, check_value

    problems, fixed = check_value(value, dict(OPTIONS))
    if fixed is not None:
        assert problems
        assert check_value(fixed, dict(OPTIONS))[0] == []


def test_hostile_lines_stay_fast() -> None:
    with no_hang():
        _hostile_runs()


def _hostile_runs() -> None:
    for text in (
        'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "' + "a:b," * 50_000 + '"',
        "PYTORCH_CUDA_ALLOC_CONF=" + "[" * 100_000,
        "\n".join("    " * (i % 50) + 'x = "PYTORCH_CUDA_ALLOC_CONF"' for i in range(5_000)),
        "del " + "a" * 200_000 + 'PYTORCH_CUDA_ALLOC_CONF"',
    ):
        _run("tests/conftest.py", "", text, False)
        _run(".github/workflows/ci.yml", "", text, True)
