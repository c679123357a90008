"""`KnobFilter.present` finds the same words with its compiled run scan as by testing
every word: for random globs (braces, `**/`, `?`, pieces no name can hold) and texts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.analysis.knobs import names as knob_names
from rules.analysis.knobs.run_scanner import literal_pieces, run_scanner

PIECE = st.sampled_from(["timeout", "tp", "a-b", "k9", "max-", "-x", "value", "metric-value",
                         "a.b", "x/y", "{tp,dp}", "**/", "*", "?", "b_c", "Zz"])
GLOB = st.lists(PIECE, min_size=1, max_size=3).map("".join)
FRAGMENT = st.one_of(
    st.sampled_from(["value", "Value", "TimeOut", "tp", "TP", "a_b", "A-B", "k9", "max_", "-x",
                     "9", "_", "--", "Zz", "b_c", "metric_value", "dp", "y", ".", "/"]),
    st.text(alphabet="aAbBkKpPtTxXyZz_-9 .\n:\t#=\"'[]{}()/\u212a\u00e9", max_size=6))
TEXT = st.lists(FRAGMENT, max_size=16).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(GLOB, min_size=1, max_size=4), st.lists(TEXT, min_size=1, max_size=3))
def test_present_equals_testing_every_word(globs: list[str], texts: list[str]) -> None:
    wanted = knob_names.KnobFilter(globs)
    for text in texts:  # several texts: the per-run memo carries over between them
        words = set(knob_names._NAME_TOKEN_RE.findall(text))
        assert set(wanted.present(text)) == {w for w in words if wanted.names_knob(w)}


def test_the_scan_is_used_for_the_default_vocabulary() -> None:
    # Guards the fast path itself: without it the test above holds trivially.
    pieces = literal_pieces(["*timeout*", "tp", "cuda-graph-*", "min-*acc*"])
    assert pieces == {"timeout", "tp", "cuda-graph-", "min-"}
    scan = run_scanner(pieces)
    assert scan is not None
    assert sorted(scan("x = my_Timeout_s + TP; --Cuda_Graph-bs 8 min_x_acc tpx")) == [
        "--Cuda_Graph-bs", "TP", "min_x_acc", "my_Timeout_s", "tpx"]  # runs, as `_runs`


def test_a_glob_without_a_literal_piece_needs_every_word() -> None:
    assert literal_pieces(["tp", "*"]) is None
    assert literal_pieces(["a.b", "x/*"]) == set()  # no name can match either
