"""Slack added to a bound that is itself a measurement, and assertions dropped from a
test that still runs.

Slack: `assert mem_after <= mem_before` → `assert mem_after <= mem_before + 5` (or
`* 1.1`): no threshold number changed, but values up to the slack over the old bound now
pass. Read only where the compared values measure something (memory, sizes, times,
scores: a name says so), with the same left side and direction on both lines; a
subtracted (or fractional) slack on a floor is the same loosening.

Dropped assertions: a hunk whose only removed code is whole one-line assertions,
adding none (nor a `raise`), inside a `def test_…` that stays, where every name the
assertion used is still in the file (so the thing it checked was not removed with it)
and no added line of the PR repeats it (not moved). Refactors that delete the code
under test, rewrite the check or move it elsewhere are not read as a dropped gate.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from operator import itemgetter

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import number
from rules.analysis.lines import MAX_LINE, code_part, indent_width, known_lines
from rules.analysis.pycode import split_args
from rules.threshold_loosening.gates import head_line
from rules.threshold_loosening.removed import AddedLines

_SPACE_RE = re.compile(r"\s+")
_ASSERT_RE = re.compile(r"^\s*assert\s+(.+)$")
# A line `_comparison` reads starts so (`code_part` keeps a line's start): searched after
# every newline of a hunk's added text at once (a literal `\n` lead, not `^` in MULTILINE
# mode, which `re` tries at every character).
_ADDED_ASSERT_RE = re.compile(r"\n\s*assert\s")
_TEXT = itemgetter(1)
_COMPARE_RE = re.compile(r"(<=|>=|<|>)")
_MEASURE_RE = re.compile(
    r"mem|ram|byte|size|alloc|peak|usage|time|duration|elapsed|latency|second|gb|mb|kb|"
    r"acc|score|throughput|tps|speed|loss|err|diff|ppl", re.I)
_SLACK_RE = re.compile(r"^([+\-*/])\(?(.+?)\)?$")
_ONE_ASSERT_RE = re.compile(r"^\s*(?:assert\s|self\.assert\w*\(|assert_\w+\()")
_REPLACED_RE = re.compile(r"assert|raise|\.fail\(|expect|check")
_STRING_RE = re.compile(r"\"[^\"]*\"|'[^']*'")
# A value's name (`tmpdir`), not a module's or an object's whose attribute is read.
_NAME_RE = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)(?![\w.])")
_BUILTINS = frozenset({"self", "len", "isinstance", "type", "None", "True", "False", "not",
                       "and", "or", "in", "is", "assert", "all", "any", "str", "int",
                       "float", "abs", "round", "list", "dict", "set", "tuple", "sum",
                       "min", "max", "f"})


@dataclass(frozen=True)
class Slack:
    old: str
    new: str
    slack: str  # `+ 5`
    line: int


def _comparison(text: str) -> tuple[str, str, str] | None:
    """(left, op, right) of `assert left op right[, message]`, spaces removed."""
    match = _ASSERT_RE.match(code_part(text[:MAX_LINE]))
    if match is None:
        return None
    args = split_args(match.group(1) + ")")
    if not args:
        return None
    parts = _COMPARE_RE.split(args[0])
    if len(parts) != 3:
        return None
    left, op, right = (_SPACE_RE.sub("", p) for p in parts)
    return (left, op, right) if left and right else None


def _loosens(ceiling: bool, op: str, amount: str) -> bool:
    value = number(amount)
    if op in "+-":
        positive = value is None or value > 0  # a named slack is taken as a margin
        return positive and (op == "+") == ceiling
    if value is None or value <= 0:
        return False
    grows = value > 1 if op == "*" else value < 1
    return grows == ceiling


def added_slack(hunk: Hunk) -> Iterator[Slack]:
    """Assertions of this hunk whose bound gained a slack, paired with the old line."""
    if not hunk.removed or not hunk.added:
        return
    added = "\n".join(map(_TEXT, hunk.added))
    if "assert" not in added or _ADDED_ASSERT_RE.search("\n" + added) is None:
        return  # no added line is an `assert` statement (`self.assertEqual` is not one)
    olds: dict[tuple[str, str], tuple[str, str]] = {}
    for line in hunk.removed:
        parsed = _comparison(line.text)
        if parsed is not None and _MEASURE_RE.search(parsed[0] + parsed[2]):
            olds[(parsed[0], parsed[1])] = (parsed[2], line.text.strip())
    for line in hunk.added:
        parsed = _comparison(line.text)
        if parsed is None or line.new_no is None or (parsed[0], parsed[1]) not in olds:
            continue
        bound, old_text = olds[(parsed[0], parsed[1])]
        rest = parsed[2]
        if rest.startswith(f"({bound})"):
            rest = rest[len(bound) + 2:]
        elif rest.startswith(bound):
            rest = rest[len(bound):]
        else:
            continue
        slack = _SLACK_RE.match(rest)
        if slack is None or not _loosens(parsed[1][0] == "<", slack.group(1), slack.group(2)):
            continue
        yield Slack(old_text, line.text.strip(), f"{slack.group(1)} {slack.group(2)}",
                    line.new_no)


def _complete(text: str) -> bool:
    code = code_part(text).rstrip()
    return bool(code) and code.count("(") == code.count(")") and not code.endswith(
        ("\\", ",", "(", "[", "{"))


def _test_function(lines: Mapping[int, str], above: int, width: int) -> str | None:
    """The `def` holding a line indented `width` whose nearest head line above is
    `above`: innermost opener first, up to the first unknown line."""
    for back in range(above, max(0, above - 300), -1):
        text = lines.get(back)
        if text is None:
            return None
        stripped = text.strip()
        if not stripped or stripped.startswith("#") or indent_width(text) >= width:
            continue
        if stripped.startswith(("def ", "async def ")):
            name = stripped.split("def ", 1)[1].split("(", 1)[0]
            return name if name.startswith("test") else None
        width = indent_width(text)
    return None


def _above(hunk: Hunk, old_no: int) -> int | None:
    """The head line the hunk shows just above removed base line `old_no`."""
    before = None
    for line in hunk.lines:
        if line.old_no == old_no and line.new_no is None:
            return before
        if line.new_no is not None:
            before = line.new_no
    return None


def dropped_test_asserts(changed: ChangedFile, hunk: Hunk, pr_added: AddedLines
                         ) -> Iterator[tuple[str, str, int]]:
    """(assertion, test name, head line) of assertions deleted from a test that stays.
    The PR's added lines are read only for a hunk that gets that far (few do)."""
    if "test" not in changed.path.rsplit("/", 1)[-1] or not changed.path.endswith(".py"):
        return
    code = [ln for ln in hunk.removed if code_part(ln.text).strip()]
    if not code or not all(_ONE_ASSERT_RE.match(ln.text) and _complete(ln.text)
                           for ln in code):
        return
    if any(_REPLACED_RE.search(code_part(ln.text)) for ln in hunk.added):
        return
    lines = known_lines(changed)
    head = "\n".join(lines.values())
    for removed in code:
        text = removed.text.strip()
        if " ".join(text.split()) in pr_added.spaced:
            continue
        at, above = head_line(hunk, removed.old_no or 0), _above(hunk, removed.old_no or 0)
        if at is None or above is None:
            continue
        test = _test_function(lines, above, indent_width(removed.text))
        checked = _STRING_RE.sub("''", code_part(text))
        names = set(_NAME_RE.findall(checked)) - _BUILTINS
        names.discard(text.split("(", 1)[0].split(".")[-1])  # the assert method itself
        if test is None or not all(re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", head)
                                   for n in names):
            continue
        yield text, test, at
