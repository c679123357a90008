"""The diff parser's fast paths give exactly what the line-by-line paths give.

`parse_hunks` builds a well-formed hunk body from counts over a tag string
(`_body_end`/`_body_fast`) and leaves anything else to `_body_loop`; `_split_files`
finds section starts with string searches when the text allows it. Both shortcuts
must be invisible.
"""

from __future__ import annotations

from itertools import chain

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.diff import _HUNK_RE, _split_files, parse_hunks
from bot.core.hunk_body import body_end as _body_end
from bot.core.hunk_body import body_fast as _body_fast
from bot.core.hunk_body import body_loop as _body_loop
from bot.core.snapshot import Hunk

_BODY_LINE = st.one_of(
    st.sampled_from(["+", "-", " ", "+a", "-b", " c", "", "\\ No newline at end of file",
                     "+x y", "-\\", " \t", "@@ -1 +1 @@", "x", "--- a/f", "+++ b/f"]),
    st.text(max_size=12).map(lambda t: t.replace("\n", "").replace("\r", "")),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_BODY_LINE, max_size=30), st.integers(0, 40), st.integers(0, 40),
       st.integers(1, 5), st.integers(1, 5))
def test_fast_body_equals_the_loop(lines: list[str], old_count: int, new_count: int,
                                   old_start: int, new_start: int) -> None:
    tags = "".join(line[:1] or " " for line in lines)
    end = _body_end(tags, 0, len(lines), old_count, new_count)
    loop_body, loop_end, error = _body_loop(lines, 0, old_start, old_count, new_start,
                                            new_count)
    if end < 0:
        return  # the loop decides; nothing to compare
    assert error is None
    fast_body = _body_fast(lines, tags, 0, end, old_start, new_start)
    assert fast_body == loop_body
    assert [type(line) for line in fast_body] == [type(line) for line in loop_body]
    skipped = end
    while skipped < len(lines) and lines[skipped].startswith("\\"):
        skipped += 1
    assert skipped == loop_end


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("+- "), min_size=1, max_size=60), st.integers(1, 9))
def test_long_runs_and_alternations_agree(kinds: list[str], start: int) -> None:
    lines = [f"{kind}line {k}" for k, kind in enumerate(kinds)]
    old_count = sum(kind != "+" for kind in kinds)
    new_count = sum(kind != "-" for kind in kinds)
    end = _body_end("".join(kinds), 0, len(lines), old_count, new_count)
    assert end == len(lines)
    assert _body_fast(lines, "".join(kinds), 0, end, start, start) == _body_loop(
        lines, 0, start, old_count, start, new_count)[0]


_FILE_LINE = st.sampled_from([
    "diff --git a/x b/x", "--- a/x", "+++ b/x", "--- x", "+++ y", "@@ -1,2 +1,2 @@",
    "@@ -1 +1 @@", "+a", "-b", " c", "", "index 1..2", "new file mode 100644", "-- x",
    "++ y", "\\ No newline at end of file", "Binary files a/x and b/x differ",
])
_BREAK = st.sampled_from(["\n", "\n", "\r\n", "\r", "\x0c", "\u2028"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_FILE_LINE, _BREAK), max_size=40), st.sampled_from(["", "\n", "\r"]))
def test_section_starts_found_by_search_equal_the_scan(
    pieces: list[tuple[str, str]], tail: str
) -> None:
    text = "".join(chain.from_iterable(pieces)) + tail
    lines = text.splitlines()
    assert list(_split_files(lines, text)) == list(_split_files(lines))


def _hunks_line_by_line(lines: list[str]) -> tuple[list[Hunk], str | None]:
    """`parse_hunks` with every body read by the loop, for comparison."""
    hunks: list[Hunk] = []
    i = 0
    while i < len(lines) and lines[i].startswith("@@"):
        match = _HUNK_RE.match(lines[i])
        if match is None:
            return hunks, "malformed"
        counts = [1 if g is None else int(g) for g in match.group(2, 4)]
        starts = [int(g) for g in match.group(1, 3)]
        body, i, error = _body_loop(lines, i + 1, starts[0], counts[0], starts[1], counts[1])
        hunks.append(Hunk(starts[0], counts[0], starts[1], counts[1], match.group(5), body))
        if error is not None:
            return hunks, error
    return hunks, None


_HUNK_HEADER = st.builds(
    lambda a, b, c, d: f"@@ -{a},{b} +{c},{d} @@",
    st.integers(0, 3), st.integers(0, 6), st.integers(0, 3), st.integers(0, 6))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_HUNK_HEADER, _BODY_LINE), max_size=40))
def test_hunks_parse_as_the_loop_reads_them(lines: list[str]) -> None:
    lines = ["@@ -1,3 +1,3 @@", *lines]
    hunks, _, error = parse_hunks(lines)
    expected, expected_error = _hunks_line_by_line(lines)
    assert hunks == expected
    assert (error is None) == (expected_error is None)
