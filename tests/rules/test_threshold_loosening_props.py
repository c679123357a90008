"""Property tests: threshold-loosening never raises and only points at added lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.threshold_loosening import ThresholdLoosening
from tests.rules.props_kit import knob_rule_properties, run_on_files

(test_texts_never_raise_and_point_at_added_lines,
 test_raw_patches_never_raise) = knob_rule_properties(ThresholdLoosening)


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
            run_on_files(ThresholdLoosening(), [{"path": path, "base": base, "head": head}], "",
                         patch_only)
