"""Loosening by widening a condition: no value changes, but the branch that selects the
looser one now holds for more cases.

```python
if is_hpu_available():                            if is_hpu_available() or is_xpu_available():
    ATOL = 1e-4                     →                 ATOL = 1e-4
else:                                             else:
    ATOL = 1e-5                                       ATOL = 1e-5
```

XPU ran with 1e-5 before and runs with 1e-4 now. A changed `if`/`elif` line is read as
widened when the new condition keeps the old one and adds an alternative (`or …`), or a
membership test gains members (`== "xpu"` → `in ("xpu", "hpu")`). The branch body's
`NAME = number` settings (a tolerance, timeout, gate or sample count by name) are
compared with the same names in the chain's other branches; one that is looser than all
of them is reported. Nothing is said without another branch to compare with.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import Categories, normalize, number
from rules.analysis.lines import indent_width, known_lines
from rules.analysis.memo import memoized
from rules.analysis.pycode import bare_assignment, branch_condition
from rules.threshold_loosening.removed import looser

_SPACE_RE = re.compile(r"\s+")
_EQ_RE = re.compile(r"^(.+?)\s*==\s*(.+)$")
_IN_RE = re.compile(r"^(.+?)\s+in\s+[(\[{](.*)[)\]}]$")
# An added line `branch_condition` can read starts so (`_MAY_BRANCH_RE` of pycode, after
# a newline): one search of the file's added text rules out most files of a PR, whose
# hunks would otherwise have every removed/added line pair read. Led by a literal `\n`
# rather than `^` in MULTILINE mode, which `re` tries at every character (2.4× slower).
_ADDED_BRANCH_RE = re.compile(r"\n\s*(?:el)?if\s")


@dataclass(frozen=True)
class Widened:
    old: str  # the old condition
    new: str
    setting: str  # `ATOL = 1e-4`, `RTOL = 1e-4`
    other: str  # what the chain's other branches set: `ATOL = 1e-5`, `RTOL = 1e-5`
    kind: str
    line: int  # the new condition's line


def _members(condition: str) -> tuple[str, frozenset[str]] | None:
    """(subject, members) of `x == a` or `x in (a, b)`."""
    match = _IN_RE.match(condition)
    if match is not None:
        items = frozenset(_SPACE_RE.sub("", m) for m in match.group(2).split(",") if m.strip())
        return _SPACE_RE.sub("", match.group(1)), items
    match = _EQ_RE.match(condition)
    if match is not None:
        return _SPACE_RE.sub("", match.group(1)), frozenset({_SPACE_RE.sub("", match.group(2))})
    return None


def widened(old: str, new: str) -> bool:
    """The new condition admits everything the old one did, and more."""
    if old == new or any(new.count(w) != old.count(w) for w in (" and ", "not ")):
        return False
    flat_old, flat_new = _SPACE_RE.sub("", old), _SPACE_RE.sub("", new)
    if new.count(" or ") > old.count(" or ") and flat_old in flat_new:
        return True
    before, after = _members(old), _members(new)
    return (before is not None and after is not None and before[0] == after[0]
            and before[1] < after[1])


def _block(lines: Mapping[int, str], start: int, width: int) -> Iterator[tuple[int, str]]:
    """The lines of the block opened on line `start` (indented deeper than `width`)."""
    number_ = start + 1
    while number_ in lines:
        text = lines[number_]
        if text.strip() and not text.strip().startswith("#") and indent_width(text) <= width:
            return
        yield number_, text
        number_ += 1


def _settings(lines: Mapping[int, str], start: int, width: int) -> dict[str, str]:
    found: dict[str, str] = {}
    for _, text in _block(lines, start, width):
        assignment = bare_assignment(text)
        if assignment is not None:
            found.setdefault(assignment[1], assignment[2])
    return found


def _siblings(lines: Mapping[int, str], start: int, width: int) -> list[dict[str, str]]:
    """The settings of the chain's other branches after line `start` (`elif`, `else`)."""
    found: list[dict[str, str]] = []
    number_ = start + 1
    while number_ in lines:
        text = lines[number_]
        stripped = text.strip()
        if stripped and not stripped.startswith("#") and indent_width(text) <= width:
            if indent_width(text) < width or not (stripped.startswith("elif ")
                                                  or stripped.startswith("else")):
                break
            found.append(_settings(lines, number_, width))
        number_ += 1
    return found


@memoized
def _may_widen(changed: ChangedFile) -> bool:
    text = changed.added_text
    return "if" in text and _ADDED_BRANCH_RE.search("\n" + text) is not None


def widened_branches(changed: ChangedFile, hunk: Hunk, categories: Categories
                     ) -> Iterator[Widened]:
    if not hunk.removed or not hunk.added or not _may_widen(changed):
        return
    lines: Mapping[int, str] | None = None
    pending: list[str] = []
    for line in hunk.lines:
        if line.old_no is not None and line.new_no is None:
            pending.append(line.text)
            continue
        if line.new_no is None or line.old_no is not None or not pending:
            pending = []
            continue
        new = branch_condition(line.text)
        old = branch_condition(pending.pop(0))
        if new is None or old is None or new[:2] != old[:2] or not widened(old[2], new[2]):
            continue
        lines = lines if lines is not None else known_lines(changed)
        body = _settings(lines, line.new_no, new[0])
        others = _siblings(lines, line.new_no, new[0])
        mine_set: list[str] = []
        their_set: list[str] = []
        kinds: list[str] = []
        for name, value in body.items():
            kind = categories.kind(normalize(name))
            mine = number(value)
            theirs = [o[name] for o in others if name in o and number(o[name]) is not None]
            if kind is None or mine is None or not theirs:
                continue
            if all(looser(kind, number(t) or 0.0, mine) for t in theirs):
                mine_set.append(f"`{name} = {value}`")
                their_set.append(f"`{name} = {' / '.join(dict.fromkeys(theirs))}`")
                kinds.append(kind)
        if mine_set:
            yield Widened(old[2], new[2], ", ".join(mine_set), ", ".join(their_set),
                          kinds[0], line.new_no)
