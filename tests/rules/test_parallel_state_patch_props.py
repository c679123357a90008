"""Property tests for parallel-state-patch."""

from __future__ import annotations

from hypothesis import strategies as st

from rules.parallel_state_patch import ParallelStatePatch
from tests.rules.props_kit import added_lines_property, no_hang, run_on_file

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


test_never_raises_and_only_flags_added_lines = added_lines_property(RULE, LINE, PATHS)


def test_hostile_lines_stay_fast() -> None:
    with no_hang():
        _hostile_runs()


def _hostile_runs() -> None:
    for text in (
        "patch('" + "a." * 100_000 + "')",
        "x" + "._A" * 60_000 + " = 1",
        "get_parallel" + "a" * 100_000 + "().override(" + "b" * 100_000,
        "\n".join("(" if i % 2 else "    setUp().override(x)" for i in range(20_000)),
        'setattr("' + "w" * 200_000,
    ):
        run_on_file(RULE, "tests/test_x.py", "", text, False)
        run_on_file(RULE, "tests/test_x.py", "", text, True)
