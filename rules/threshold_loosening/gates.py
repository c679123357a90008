"""Numeric bounds in assertions (`assert acc > 0.8`, `assertGreater(acc, 0.8)`), paired
old → new within a hunk: which ones a change lowered (a floor) or raised (a ceiling).

Only bounds of the same test function pair. The function is read from the whole file
when the hunk does not show its `def`, and a `def` line the PR replaces by another
(`test_offline_x` → `test_input_x`) is the same function renamed: a bound of a test the
PR adds is not the old bound of the test it replaced or renamed."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import number
from rules.analysis.lines import MAX_LINE, SideLine, code_part, side_text, sides
from rules.analysis.memo import memoized
from rules.analysis.pycode import split_args

_SPACE_RE = re.compile(r"\s+")
_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
# `assert score >= 0.8` / `assert 0.8 <= score`; the subject may not contain <, >, = or ,
_ASSERT_RE = re.compile(rf"^\s*assert\s+([^<>=!#,]+)([<>]=?)\s*({_NUM})\s*(?:,|#|$)")
_ASSERT_REV_RE = re.compile(rf"^\s*assert\s+({_NUM})\s*([<>]=?)\s*([^<>=!#,]+?)\s*(?:,|#|$)")
_METHOD_RE = re.compile(r"\bassert(Greater|Less)(?:Equal)?\(")
# A line of a joined side that the two `assert` patterns above could match: `\s*` may
# run across blank lines, but only to an `assert` that starts its own line anyway.
# A line starting `assert`, after a newline: searched over "\n" + a side's text (`^` in
# MULTILINE mode would be tried at every character; a literal lead jumps to newlines).
_ASSERT_START_RE = re.compile(r"\n\s*assert\s")
_DEF_START_RE = re.compile(r"^\s*(?:async\s+)?def\s")
_DEF_NAME_RE = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)")

@dataclass(frozen=True)
class _Gate:
    """A numeric bound in an assertion: `subject` must stay above (lower) or below it."""

    subject: str
    lower: bool
    bound: float
    text: str
    line: int
    changed: bool
    owner: str | None = None  # the enclosing `def` the side shows, if any


def _owner(side: Sequence[SideLine], i: int) -> str | None:
    """The name of the function the side's line `i` sits in (its nearest `def` above,
    indented less), or None when the side does not show it."""
    width = len(side[i][1]) - len(side[i][1].lstrip())
    for _, text, _ in reversed(side[max(0, i - 400):i]):
        code = code_part(text[:MAX_LINE])
        stripped = code.strip()
        if not stripped or len(code) - len(code.lstrip()) >= width:
            continue
        match = _DEF_NAME_RE.match(code)
        if match:
            return match.group(1)
        width = len(code) - len(code.lstrip())
    return None


def _gates(side: Sequence[SideLine]) -> list[_Gate]:
    """The bounds asserted on a side. A commented-out assertion is no gate: a hunk that
    un-comments one with another bound adds a gate, it does not retune one."""
    gates: list[_Gate] = []
    for i, (no, text, changed) in enumerate(side):
        if "assert" not in text[:MAX_LINE]:
            continue
        code = code_part(text[:MAX_LINE])
        if "assert" not in code:
            continue
        match = _ASSERT_RE.match(code)
        if match:
            subject, op, value = match.group(1), match.group(2), match.group(3)
            gates.append(_Gate(_SPACE_RE.sub("", subject), op[0] == ">", float(value),
                               value, no, changed, _owner(side, i)))
            continue
        match = _ASSERT_REV_RE.match(code)
        if match:
            value, op, subject = match.group(1), match.group(2), match.group(3)
            gates.append(_Gate(_SPACE_RE.sub("", subject), op[0] == "<", float(value),
                               value, no, changed, _owner(side, i)))
            continue
        method = _METHOD_RE.search(code)
        if method is None:
            continue
        # The arguments may continue on the next two lines of the same side.
        parts = [(no, code[method.end():], changed)]
        parts += [(n, code_part(t[:MAX_LINE]), c) for n, t, c in side[i + 1 : i + 3]]
        joined = " ".join(p[1] for p in parts)
        args = split_args(joined)
        if not args or len(args) < 2:
            continue
        greater = method.group(1) == "Greater"
        first, second = number(args[0]), number(args[1])
        if second is not None and first is None:
            subject, bound, text_value, lower = args[0], second, args[1], greater
        elif first is not None and second is None:
            subject, bound, text_value, lower = args[1], first, args[0], not greater
        else:
            continue
        where = next((p for p in parts if text_value in p[1] and p[2]), None)
        where = where or next((p for p in parts if p[2]), parts[0])
        gates.append(_Gate(_SPACE_RE.sub("", subject), lower, bound, text_value, where[0],
                           where[2], _owner(side, i)))
    return gates


def _may_gate(side: Sequence[SideLine]) -> bool:
    """Whether any line of the side can hold an assertion `_gates` reads (most can't)."""
    _, joined = side_text(side)
    if "assert" not in joined:
        return False  # a substring test first: the regex tries every position
    return ("assertGreater" in joined or "assertLess" in joined
            or _ASSERT_START_RE.search("\n" + joined) is not None)


@memoized
def _may_gate_sides(hunk: Hunk) -> tuple[bool, bool]:
    """`_may_gate` of the base and head side, asked by both readers below."""
    old_side, new_side = sides(hunk)
    return _may_gate(old_side), _may_gate(new_side)


def _file_owner(lines: tuple[str, ...] | None, number: int) -> str | None:
    """`_owner` of line `number` read from a side's whole text."""
    if lines is None or not 0 < number <= len(lines):
        return None
    first = max(1, number - 400)
    window = [(n, lines[n - 1], False) for n in range(first, number + 1)]
    return _owner(window, len(window) - 1)


@memoized
def _renamed(changed: ChangedFile) -> dict[str, str]:
    """Functions whose `def` line the PR replaced by another `def` (old → new name):
    the removed and added `def`s of one run of changed lines, in order."""
    names: dict[str, str] = {}
    for hunk in changed.hunks:
        gone: list[str] = []
        came: list[str] = []
        for line in [*hunk.lines, None]:
            if line is None or (line.old_no is not None and line.new_no is not None):
                names.update(zip(gone, came, strict=False))
                gone, came = [], []
                continue
            match = _DEF_NAME_RE.match(line.text[:MAX_LINE])
            if match:
                (came if line.old_no is None else gone).append(match.group(1))
    return names


def gate_loosenings(changed: ChangedFile, hunk: Hunk) -> Iterator[tuple[_Gate, _Gate]]:
    old_side, new_side = sides(hunk)
    old_may, new_may = _may_gate_sides(hunk)
    if not new_may or not old_may:
        return
    news = [g for g in _gates(new_side) if g.changed and not _BUDGET_RE.search(g.subject)]
    if not news:
        return
    olds = [g for g in _gates(old_side) if g.changed]
    renamed = _renamed(changed)
    old_owners = [renamed.get(owner, owner) if (owner := o.owner or _file_owner(
        changed.base_lines, o.line)) else None for o in olds]
    used: set[int] = set()
    for gate in news:
        # A bound in another test function is another gate (`test_mmlu`'s new one is
        # not `test_gsm8k`'s old one retuned).
        owner = gate.owner or _file_owner(changed.head_lines, gate.line)
        k = next((k for k, o in enumerate(olds) if k not in used
                  and o.subject == gate.subject and o.lower == gate.lower
                  and (old_owners[k] is None or owner is None or old_owners[k] == owner)),
                 None)
        if k is None:
            continue
        used.add(k)
        old = olds[k]
        if (gate.bound < old.bound) if gate.lower else (gate.bound > old.bound):
            yield old, gate


# A bound on what CI may spend (a suite's GPU hours, a cost), not on a result.
_BUDGET_RE = re.compile(r"budget|gpu_?hours|node_?hours|hours|cost|quota|capacity", re.I)
_QUOTED_RE = re.compile(r"\"[^\"]*\"|'[^']*'")
# Subjects of a bound that measures a result (a score, a speed, an error), not a shape.
_METRIC_RE = re.compile(
    r"acc|score|throughput|recall|precision|f1|bleu|rouge|pass|similar|cos|speedup|tps|"
    r"tok|latency|ttft|tpot|err|diff|delta|loss|ratio|match|exact|metric|perf|ppl|perplex",
    re.I)


def _measures(subject: str) -> bool:
    """A subject naming a result (`acc`, `metrics['score']` is not: its name is data)."""
    if subject.startswith(("len(", "isinstance(", "type(")):
        return False
    return _METRIC_RE.search(_QUOTED_RE.sub("", subject)) is not None


def dropped_asserts(hunk: Hunk) -> Iterator[tuple[_Gate, int]]:
    """Bound assertions on a result that the hunk deletes (no assertion on the same
    subject stays, and the bound is on no added line), with the nearest head line.
    A hunk that deletes a test function is a deleted test, not a deleted gate."""
    old_side, new_side = sides(hunk)
    if not _may_gate_sides(hunk)[0]:
        return
    olds = [g for g in _gates(old_side) if g.changed and _measures(g.subject)]
    if not olds or any(_DEF_START_RE.match(line.text) for line in hunk.removed):
        return
    kept = {g.subject for g in _gates(new_side)}
    added = " ".join(line.text for line in hunk.added)
    for gate in olds:
        if gate.subject in kept or gate.text in added:
            continue
        at = head_line(hunk, gate.line)
        if at is not None:
            yield gate, at


def head_line(hunk: Hunk, old_no: int) -> int | None:
    """The head line nearest to a removed base line: the next one the hunk shows, else
    the previous; None when the hunk shows no head line (the file was emptied)."""
    lines = hunk.lines
    at = next((i for i, line in enumerate(lines) if line.old_no == old_no), 0)
    after = next((line.new_no for line in lines[at:] if line.new_no is not None), None)
    before = next((line.new_no for line in reversed(lines[:at]) if line.new_no is not None),
                  None)
    return after or before
