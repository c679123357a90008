"""Property tests for parallel-state-patch."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import Config
from bot.engine import classify_snapshot
from rules.base import RuleContext
from rules.parallel_state_patch import ParallelStatePatch
from tests.conftest import make_snapshot

RULE = ParallelStatePatch()
VOCAB = [
    "from vllm.distributed import parallel_state", "import x.parallel_state as ps",
    "parallel_state._MOE_EP = SimpleNamespace(world_size=1)", "ps._TP = FakeGroup(",
    "    world_size=1)", '@mock.patch("vllm.distributed.parallel_state._TP")',
    "with mock.patch.object(", "    parallel_state,", '    "_EP",', "    MagicMock(),", "):",
    'monkeypatch.setattr(parallel_state, "get_tp_group", lambda: SimpleNamespace(a=1))',
    '@patch("m.get_pp_group")', "def setUp(self):", "    get_parallel().override(moe_ep_size=1)",
    "class TestX(unittest.TestCase):", "    def test_a(self):", "@pytest.fixture", "def ep(",
    "x = '(('", "# parallel_state._TP = 1", "", "    ", "\\", '"""', "(" * 40, ")" * 40,
]
LINE = st.one_of(st.sampled_from(VOCAB), st.text(max_size=60))
PATHS = st.sampled_from(["tests/test_x.py", "test/registered/cpu/test_y.py", "tests/conftest.py"])


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


def test_hostile_lines_stay_fast() -> None:
    for text in (
        "patch('" + "a." * 100_000 + "')",
        "x" + "._A" * 60_000 + " = 1",
        "get_parallel" + "a" * 100_000 + "().override(" + "b" * 100_000,
        "\n".join("(" if i % 2 else "    setUp().override(x)" for i in range(20_000)),
        'setattr("' + "w" * 200_000,
    ):
        started = time.perf_counter()
        _run("tests/test_x.py", "", text, False)
        _run("tests/test_x.py", "", text, True)
        assert time.perf_counter() - started < 5
