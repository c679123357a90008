"""Hyperscan + RE2 and the pure-Python fallback give the same answers, line for line."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.evidence.extract import extract_bytes, extract_file
from bot.evidence.logstrip import strip_markers
from bot.evidence.multimatch import (
    HyperscanLineFinder,
    Re2BranchFilter,
    engines_available,
    literal_expression,
)
from bot.evidence.patterns import load_catalog
from bot.evidence.scan import MAX_CARRY_BYTES, LineScanner, RegexLineFinder, engines_for

ROOT = Path(__file__).resolve().parent.parent.parent
LOGS = sorted((ROOT / "tests" / "data" / "ci-logs").glob("*.log")) + sorted(
    (ROOT / "eval" / "ci-logs").glob("*.log")
)
CATALOG = load_catalog()


def _compiled() -> tuple[HyperscanLineFinder, Re2BranchFilter]:
    if not engines_available():
        # CI installs the package's dependencies: a missing engine there is a failure.
        if os.environ.get("CI"):
            pytest.fail("hyperscan and google-re2 must be installed under CI")
        pytest.skip("hyperscan or google-re2 is not installed")
    finder, may_match = engines_for(CATALOG, "compiled")
    assert isinstance(finder, HyperscanLineFinder)
    assert isinstance(may_match, Re2BranchFilter)
    return finder, may_match


def test_both_corpora_are_there() -> None:
    assert len(LOGS) > 100


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_every_corpus_log_gets_the_same_result_from_both_engines(log: Path) -> None:
    _compiled()
    assert extract_file(log, engine="compiled") == extract_file(log, engine="python")


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_both_finders_pick_the_same_lines_and_classify_them_alike(log: Path) -> None:
    finder, may_match = _compiled()
    python = RegexLineFinder(CATALOG.prefilter())
    data = log.read_bytes()
    stop = data.rfind(b"\n") + 1
    assert finder(data, stop) == python(data, stop)
    for raw in data.split(b"\n"):
        text = strip_markers(raw.decode("utf-8", errors="replace"))
        assert CATALOG.classify(text, may_match) == CATALOG.classify(text), text



def test_re2_parses_every_catalog_branch() -> None:
    _, may_match = _compiled()
    assert may_match.unsupported == frozenset()


def test_an_unparsable_branch_is_left_to_python() -> None:
    _compiled()
    branch_filter = Re2BranchFilter(["abc", r"(a)\1", "x(?!y)"])
    assert branch_filter.unsupported == {1, 2}
    assert branch_filter("zzz") == {1, 2}
    assert branch_filter("zabc") == {0, 1, 2}
    assert branch_filter("naïve abc") is None  # non-ASCII: Python alone


FRAGMENTS = st.sampled_from([
    "error", "Error", "ERROR", "error_", "errors", "error=", "xfail", "XFAIL", "fail",
    "failures", "fail_", "exception", "exceptions", "exception_", "Killed", "killed",
    "timeout", "TIMED OUT", "exit code 137", "OutOfMemoryError: ", "CUDA out of memory",
    "No module named ", "x", "_", "=", "s", "i", "ion", "u", "ur", "ure", " ", "\t", "é",
    "\x1b[31m", "RuntimeError: ", "AssertionError", "::", "FAILED ", "[", "]", "0", "9",
])


@given(st.lists(st.lists(FRAGMENTS, max_size=8).map("".join), max_size=12))
def test_random_lines_give_the_same_starts_and_classes(lines: list[str]) -> None:
    finder, may_match = _compiled()
    data = ("\n".join(lines) + "\n").encode()
    python = RegexLineFinder(CATALOG.prefilter())
    assert finder(data, len(data)) == python(data, len(data))
    for line in lines:
        text = strip_markers(line)
        assert CATALOG.classify(text, may_match) == CATALOG.classify(text)


GATES = st.lists(st.text(alphabet="abx_", min_size=1, max_size=3), max_size=3)


@given(GATES, GATES, st.text(alphabet="abx_\n", max_size=12))
def test_lookaround_free_gates_match_python_lookarounds(
    after: list[str], before: list[str], around: str
) -> None:
    _compiled()
    literal = "ab"
    lookaround = re.escape(literal)
    if after:
        lookaround += "(?!" + "|".join(map(re.escape, after)) + ")"
    for prefix in before:
        lookaround += "(?<!" + re.escape(prefix + literal) + ")"
    expression = literal_expression(literal, after, before)
    finder = HyperscanLineFinder([expression])
    data = (around + literal + around + "\n").encode()
    python = RegexLineFinder([re.compile(lookaround.encode())])
    assert finder(data, len(data)) == python(data, len(data))


def test_a_line_of_hits_is_found_once_and_the_scan_goes_on() -> None:
    finder, _ = _compiled()
    data = b"error " * 10_000 + b"\nok\nlast error here\n"
    assert finder(data, len(data)) == [0, data.index(b"last")]


def test_small_chunks_change_nothing() -> None:
    _compiled()
    data = b"".join(log.read_bytes() for log in LOGS[:20])
    for engine in ("compiled", "python"):
        assert extract_bytes(data, chunk_size=997, engine=engine) == extract_bytes(
            data, engine=engine
        )


def test_a_line_past_the_carry_cap_is_reported_as_skipped() -> None:
    tail = b" RuntimeError: hidden in the tail"
    data = b"x" * (MAX_CARRY_BYTES + (2 << 20)) + tail + b"\nTypeError: seen\n"
    for engine in ("auto", "python"):
        result = extract_bytes(data, chunk_size=1 << 20, engine=engine)
        assert result.skipped == (f"{(2 << 20) + len(tail)} bytes past the first 4 MiB of 1 "
                                  "over-long line(s) were not searched")
        assert result.line_no == 2 and result.category is not None
    # A long line that fits is searched whole, and classified on its head, which is said.
    data = b"x" * (1 << 20) + tail + b"\n"
    assert extract_bytes(data, engine="auto").skipped == (
        "1 line(s) longer than 8 KiB holding a failure word were classified on their "
        "first 8 KiB only")
    assert extract_bytes(b"TypeError: seen\n").skipped is None


def test_the_scanner_counts_what_it_did_not_search() -> None:
    data = b"a" * 100 + b"\nRuntimeError: x\n"
    chunks = iter([data[:60], data[60:]])
    scanner = LineScanner(lambda _n: next(chunks, b""), RegexLineFinder(CATALOG.prefilter()),
                          max_line=10, max_carry=20)
    assert [n for n, _ in scanner.candidates()] == [2]
    assert scanner.long_lines == 1 and scanner.skipped_bytes == 80
