"""Removing CI decorations from one log line."""

from __future__ import annotations

import pytest

from bot.evidence.logstrip import cap, decode_line, strip_markers


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        # GitHub Actions timestamp
        ("2026-07-30T03:36:29.7354318Z torch.OutOfMemoryError: x", "torch.OutOfMemoryError: x"),
        ("2026-07-30T03:36:29Z ##[error]Process completed", "##[error]Process completed"),
        # Buildkite export prefix
        ("[2026-07-13T19:39:36Z] FAILED a.py::t - E: x", "FAILED a.py::t - E: x"),
        # raw Buildkite APC timestamp marker plus colours
        (
            "\x1b_bk;t=1778141500078\x07\x1b[0;36m(APIServer pid=19502)\x1b[0;0m ERROR x",
            "(APIServer pid=19502) ERROR x",
        ),
        ("\x1b_bk;t=1778142104590\x07\x1b[1m\x1b[31mE   assert False\x1b[0m", "E   assert False"),
        # CircleCI and Jenkins time prefixes
        ("Jul 06 09:41:22 RuntimeError: test_c10d failed!", "RuntimeError: test_c10d failed!"),
        ("10:29:14 + cleanup", "+ cleanup"),
        # Buildkite web-UI gutter copied into an issue
        ("  | ERROR tests/a.py::T::t - OSError: x", "ERROR tests/a.py::T::t - OSError: x"),
        # BOM, CR, trailing blanks, OSC hyperlink, stray control bytes
        ("\ufeff2024-07-12T17:09:33.3205697Z Running x", "Running x"),
        ("progress 10%\rprogress 100%\r\n", "progress 10%progress 100%"),
        ("runner lost.   ", "runner lost."),
        ("\x1b]8;;https://x.test\x07link\x1b]8;;\x07 text", "link text"),
        ("a\x00b\x08c\td", "abc\td"),
    ],
)
def test_strip_markers(raw: str, text: str) -> None:
    assert strip_markers(raw) == text


def test_only_one_leading_timestamp_is_removed() -> None:
    inner = "2026-07-30T03:36:29.7354318Z 2026-01-01T00:00:00Z nested"
    assert strip_markers(inner) == "2026-01-01T00:00:00Z nested"


def test_text_that_merely_looks_like_a_prefix_stays() -> None:
    assert strip_markers("12:00:00") == "12:00:00"  # a bare time, nothing after it
    assert strip_markers("| a | b |") == "a | b |"  # one gutter only
    assert strip_markers("    File \"x.py\", line 3") == "    File \"x.py\", line 3"


def test_decode_line_never_fails() -> None:
    assert decode_line(b"caf\xc3\xa9") == "café"
    assert decode_line(b"caf\xe9 latin-1") == "caf\ufffd latin-1"
    assert decode_line(b"\xe2\x82") == "\ufffd"  # truncated multi-byte sequence


def test_cap_marks_the_cut() -> None:
    assert cap("abcdef", 10) == "abcdef"
    assert cap("abcdef", 4) == "abc…"
    assert len(cap("x" * 5000, 1000)) == 1000
