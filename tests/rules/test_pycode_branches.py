"""branch_condition's prefilter and enclosing_branch's shared opener walk (lines.openers)
against straightforward reference readings of the same lines."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from rules.analysis.lines import code_part, indent_width
from rules.analysis.pycode import branch_condition, enclosing_branch

_REF_RE = re.compile(r"^(\s*)(if|elif)\s+(.+?):\s*$")

_PIECES = ["if", "elif", "else", " ", "\t", "x", ":", "#", "(", "y == 1", "  ", "iff", "el"]
_line = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)


def _ref_branch(text: str) -> tuple[int, str, str] | None:
    match = _REF_RE.match(code_part(text).rstrip())
    return None if match is None else (len(match.group(1)), match.group(2),
                                       match.group(3).strip())


@given(_line)
def test_prefilter_never_changes_the_answer(text: str) -> None:
    assert branch_condition(text) == _ref_branch(text)


def test_prefilter_keeps_branches_and_drops_lookalikes() -> None:
    assert branch_condition("    elif tol > 1:  # why") == (4, "elif", "tol > 1")
    assert branch_condition("\tif ok:") == (1, "if", "ok")
    assert branch_condition("iffy = 1") is None  # a name starting with `if`
    assert branch_condition("if(x):") is None  # the pattern wants a space, as before
    assert branch_condition("# if x:") is None


def test_enclosing_branch_reads_the_innermost_opener() -> None:
    lines = dict(enumerate([
        "if a:",          # 1
        "    x = 1",      # 2
        "elif b:",        # 3
        "",               # 4
        "    # note",     # 5
        "    y = 2",      # 6
        "else:",          # 7
        "    z = 3",      # 8
        "def f():",       # 9
        "    w = 4",      # 10
        "top = 5",        # 11
    ], start=1))
    assert enclosing_branch(lines, 6).kind == "elif"
    assert enclosing_branch(lines, 6).conditions == ((1, "a"), (3, "b"))
    assert enclosing_branch(lines, 8).kind == "else"
    assert enclosing_branch(lines, 10).kind == "none"  # opener is not a branch
    assert enclosing_branch(lines, 11).kind == "none"  # top level: no opener
    assert enclosing_branch(lines, 2, limit=1).kind == "none"  # opener beyond the limit
    assert indent_width(lines[6]) == 4
