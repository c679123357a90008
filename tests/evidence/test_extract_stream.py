"""Streaming behaviour: any size, any bytes, constant memory, chunking-independent."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.evidence.extract import (
    LINE_MAX_CHARS,
    NoRootCause,
    Result,
    RootCause,
    extract_binary,
    extract_bytes,
    extract_file,
)

LOGS = Path(__file__).resolve().parent.parent / "data" / "ci-logs"
NOISE = (
    b"2026-07-30T10:07:22.1461895Z test_ops.py::TestCommonCUDA::test_add_cuda_float32 PASSED"
    b" [0.0114s] [ 12%]\n"
    b"[2026-07-13T19:39:36Z] (APIServer pid=1913) INFO 07-13 19:39:36 [loggers.py:1] Running\n"
    b"2026-07-30T10:07:22.1461895Z test_nn.py::TestNN::test_error_messages PASSED [0.0100s]\n"
    b"\x1b_bk;t=1778141500078\x07\x1b[0;36m[1266/3874] Building CXX object c10/a.cpp.o\x1b[0m\n"
)
OOM = (
    b"2026-07-30T03:36:29.7354318Z torch.OutOfMemoryError: CUDA out of memory."
    b" Tried to allocate 4.39 GiB.\n"
)
TIMEOUT = b"2026-07-30T10:37:27.7634265Z Command took >30min, returning 124\n"
EXIT = b"2026-07-29T09:31:11.1935632Z ##[error]Process completed with exit code 1.\n"


def _root(result: Result) -> RootCause:
    assert isinstance(result, RootCause), result
    return result


# -- selection ----------------------------------------------------------------------


def test_a_crash_after_a_timeout_still_wins_and_the_timeout_is_its_surface() -> None:
    result = _root(extract_bytes(NOISE + TIMEOUT + NOISE + OOM + NOISE + EXIT))
    assert (result.category, result.line_no) == ("cuda-oom", 10)
    assert result.surface is not None and result.surface.line_no == 15  # after beats before


def test_with_nothing_deeper_the_timeout_is_the_cause() -> None:
    result = _root(extract_bytes(NOISE + TIMEOUT + NOISE + EXIT))
    assert (result.category, result.line_no) == ("timeout-surface", 5)
    assert result.surface is not None and result.surface.line.startswith("##[error]Process")


def test_repeats_keep_the_first_occurrence() -> None:
    result = _root(extract_bytes(NOISE + OOM + NOISE + OOM))
    assert result.line_no == 5


def test_only_surface_symptoms_report_the_wrapper_with_a_note() -> None:
    result = _root(extract_bytes(NOISE + b"RuntimeError: test_cuda 1/1 failed!\n" + EXIT))
    assert (result.line_no, result.pattern_id) == (5, "harness-wrapper")
    assert result.note is not None and "not in this log" in result.note
    assert result.surface is not None and result.surface.line_no == 6


def test_a_real_cause_has_no_note_and_explains_its_symptoms() -> None:
    log = NOISE + OOM + b"RuntimeError: Server failed to start within 600 seconds\n" + EXIT
    result = _root(extract_bytes(log))
    assert result.note is None and result.category == "cuda-oom"
    assert [(s.line_no, s.pattern_id) for s in result.chain.symptoms] == [
        (6, "server-start-timeout"), (7, "exit-code")]
    assert result.explain() == (
        "exit-code at line 7 ← server-start-timeout at line 6 ← cuda-oom at line 5")


def test_a_retry_loop_reports_the_first_error_and_counts_the_attempts() -> None:
    attempt = b"Error response from daemon: manifest unknown\nExited with 1\n"
    result = _root(extract_bytes(NOISE + attempt * 3 + b"Failed 3 retries\n"))
    assert (result.category, result.line_no, result.attempts) == ("container-infra", 5, 3)
    assert result.chain.occurrences == (5, 7, 9)
    assert "3 times, last at line 9" in result.explain()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (NOISE * 3, "no line matched"),
        (b"\x00\x01\x02binary\x00" * 100, "binary"),
    ],
)
def test_no_root_cause_has_a_reason(data: bytes, reason: str) -> None:
    result = extract_bytes(data)
    assert isinstance(result, NoRootCause) and reason in result.reason


# -- input shapes -------------------------------------------------------------------


def test_crlf_non_utf8_and_truncated_input() -> None:
    data = b"caf\xe9 latin-1 line\r\n" + OOM.replace(b"\n", b"\r\n") + b"half a \xe2\x82"
    result = _root(extract_bytes(data))
    assert result.line_no == 2 and result.line.endswith("Tried to allocate 4.39 GiB.")
    assert result.lines_scanned == 3


def test_a_last_line_without_newline_is_read() -> None:
    result = _root(extract_bytes(NOISE + OOM.rstrip(b"\n")))
    assert result.line_no == 5


def test_huge_lines_are_capped_and_counted(tmp_path: Path) -> None:
    giant = b"Running 2097 items in this shard: " + b"test/t.py::T::test_x, " * 250_000
    log = tmp_path / "long.log"
    # Lines 5 and 6 are 5.5 MB each; only the first 8 KiB of a line are classified, so
    # the OOM text at the end of line 6 is not seen, the one on line 7 is.
    log.write_bytes(NOISE + giant + b"\n" + giant + OOM + OOM + NOISE)
    result = _root(extract_file(log))
    assert (result.category, result.line_no, result.lines_scanned) == ("cuda-oom", 7, 11)
    assert len(result.line) <= LINE_MAX_CHARS
    assert [c.line_no for c in result.context] == [4, 5, 6, 8, 9, 10]
    assert all(len(c.line) <= 300 for c in result.context)


def test_one_giant_line_without_any_newline(tmp_path: Path) -> None:
    log = tmp_path / "blob.log"
    log.write_bytes(b"x" * (3 << 20) + b" CUDA out of memory")
    result = extract_file(log)
    assert isinstance(result, NoRootCause)  # beyond the per-line cap, by design
    assert result.lines_scanned == 1


@pytest.mark.parametrize("log", sorted(LOGS.glob("*.log")), ids=lambda p: p.stem)
def test_chunk_boundaries_do_not_change_the_result(log: Path) -> None:
    data = log.read_bytes()
    expected = extract_bytes(data, context=4)
    for chunk_size in (1, 7, 64, 1000):
        assert extract_bytes(data, context=4, chunk_size=chunk_size) == expected


def test_stdin_like_streams_work() -> None:
    result = _root(extract_binary(io.BytesIO(NOISE + OOM)))
    assert result.line_no == 5


# -- size and memory ----------------------------------------------------------------


def test_a_large_generated_log(tmp_path: Path) -> None:
    block = NOISE * 2000  # ~0.7 MB, 8000 lines
    log = tmp_path / "large.log"
    with log.open("wb") as out:
        for _ in range(70):  # ~50 MB
            out.write(block)
        out.write(TIMEOUT)
        for _ in range(5):
            out.write(block)
        out.write(OOM)
        out.write(EXIT)
    lines_before_oom = 75 * 8000 + 1
    result = _root(extract_file(log))
    assert (result.category, result.line_no) == ("cuda-oom", lines_before_oom + 1)
    assert result.surface is not None and result.surface.line_no == lines_before_oom + 2
    assert result.lines_scanned == lines_before_oom + 2


def _peak_allocated(data_size: int, tmp_path: Path) -> int:
    log = tmp_path / f"mem-{data_size}.log"
    block = NOISE * 1000
    with log.open("wb") as out:
        for _ in range(data_size // len(block)):
            out.write(block)
        out.write(OOM)
    tracemalloc.start()
    try:
        _root(extract_file(log))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_log(tmp_path: Path) -> None:
    small = _peak_allocated(2 << 20, tmp_path)
    large = _peak_allocated(24 << 20, tmp_path)
    assert large < 16 << 20  # a few 1 MiB chunk buffers, whatever the size
    assert large < small + (1 << 20)


# -- properties -----------------------------------------------------------------------

FRAGMENTS = [
    OOM, TIMEOUT, EXIT, NOISE, b"\n", b"\r", b"\x00", b"\xff\xfe", b"\x1b[31m", b"\x1b_bk;t=1\x07",
    b"RuntimeError: ", b"FAILED a.py::t - ", b"    raise X(", b"Segmentation fault", b"rror",
    b"E   AssertionError", b"##[error]", b"  | ", b"\xe2\x82", b"x" * 9000,
]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4096), st.integers(min_value=1, max_value=64))
def test_arbitrary_bytes_never_raise(data: bytes, chunk_size: int) -> None:
    result = extract_bytes(data, chunk_size=chunk_size)
    assert result.lines_scanned == data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
    if isinstance(result, RootCause):
        assert 1 <= result.line_no <= result.lines_scanned


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40), st.integers(min_value=1, max_value=4096))
def test_log_like_input_is_chunking_independent(parts: list[bytes], chunk_size: int) -> None:
    data = b"".join(parts)
    assert extract_bytes(data, chunk_size=chunk_size) == extract_bytes(data)
