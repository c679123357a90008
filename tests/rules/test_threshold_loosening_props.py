"""Property tests: threshold-loosening never raises and only points at added lines."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from bot.core.findings import Finding
from bot.core.repo_view import MappedRepoView
from rules.base import RuleContext
from rules.threshold_loosening import ThresholdLoosening
from tests.conftest import make_snapshot
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


def _findings(files: list[dict[str, object]], repo_files: dict[str, str] | None = None,
              patch_only: bool = False) -> list[Finding]:
    snapshot = classify_snapshot(make_snapshot(files, "t", "", patch_only), Config())
    if repo_files is not None:
        snapshot = dataclasses.replace(snapshot, repo_view=MappedRepoView(repo_files))
    rule = ThresholdLoosening()
    return list(rule.check(RuleContext(snapshot, Config(), rule.id, dict(rule.options))))


MODEL = st.from_regex(r"[a-z]{2,8}/[a-z]{2,8}-[0-9]{1,2}b", fullmatch=True)
SCORE = st.integers(1, 99).map(lambda n: f"0.{n:02d}")


@settings(max_examples=80, deadline=None)
@given(MODEL, MODEL, SCORE, SCORE, st.booleans())
def test_values_of_two_model_entries_never_pair(
    old_model: str, new_model: str, old: str, new: str, patch_only: bool
) -> None:
    """A removed entry's gate and a new entry's gate are not one gate changed."""
    if old_model == new_model:
        return
    base = f"models:\n  - model_name: {old_model}\n    accuracy_threshold: {old}\n"
    head = f"models:\n  - model_name: {new_model}\n    accuracy_threshold: {new}\n"
    found = _findings([{"path": "tests/evals/gsm8k/models.yaml", "base": base, "head": head}],
                      patch_only=patch_only)
    assert not [f for f in found if "lowered" in f.message or "raised" in f.message], found


@settings(max_examples=80, deadline=None)
@given(SCORE, SCORE)
def test_dropped_gate_under_a_default_as_strict_is_silent(old: str, default: str) -> None:
    """Dropping an override falls back to the code default: loosened only below `old`."""
    base = f"model: m\nlmeval:\n  recovery_threshold: {old}\n  limit: 10\n"
    head = "model: m\nlmeval:\n  limit: 10\n"
    code = {"tests/lmeval/test_lmeval.py":
            f"class Cfg(BaseModel):\n    recovery_threshold: float = {default}\n"}
    found = _findings([{"path": "tests/lmeval/configs/a.yaml", "base": base, "head": head}],
                      code)
    loosened = float(default) < float(old)
    assert bool(found) == loosened, (old, default, found)
    assert all(default in f.message for f in found)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(GATES, NUMBERS, NUMBERS), min_size=1, max_size=8), st.booleans())
def test_enabling_commented_out_checks_retunes_nothing(
    items: list[tuple[str, str, str]], patch_only: bool
) -> None:
    """Checks that were commented out enforced nothing: enabling them with other values
    lowers, raises or cuts nothing."""
    base = "\n".join("# " + t.format(v=a) for t, a, _ in items) + "\n"
    head = "\n".join(t.format(v=b) for t, _, b in items) + "\n"
    for path in ("test/registered/cpu/test_a.py", "tests/evals/gsm8k/configs/a.yaml"):
        found = _findings([{"path": path, "base": base, "head": head}], patch_only=patch_only)
        assert not [f for f in found if any(
            w in f.message for w in (" lowered ", " raised ", " cut ", " widened "))], found
