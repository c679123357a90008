"""Small readers of Python lines shared by the tolerance and assertion checks: the
arguments of a call, the tokens of a condition, the `if`/`elif`/`else` chain a line
sits in (from a possibly partial file), and bare `NAME = number` assignments."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from rules.analysis.lines import code_part, indent_width, openers

NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_ASSIGN_RE = re.compile(rf"^(\s*)([A-Za-z_]\w*)\s*(?::\s*[\w.]+\s*)?=\s*({NUM})\s*$")
_BRANCH_RE = re.compile(r"^(\s*)(if|elif)\s+(.+?):\s*$")
# One C-level match that rejects almost every line before `code_part` and the full
# pattern run: callers ask about every line of a hunk, and few open a branch. It only
# looks at the line's start, which `code_part` leaves as it is, so it never drops a match.
_MAY_BRANCH_RE = re.compile(r"\s*(?:el)?if\s")
_ELSE_RE = re.compile(r"^(\s*)else\s*:\s*$")
_TOKEN_RE = re.compile(r"\"[^\"]*\"|'[^']*'|[A-Za-z_]\w*")
_KEYWORDS = frozenset({"if", "elif", "else", "or", "and", "not", "in", "is", "None", "True",
                       "False"})


def split_args(text: str) -> list[str] | None:
    """Top-level arguments of a call whose `(` was just consumed; None if it never closes."""
    args: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                args.append(text[start:i].strip())
                return args
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    return None


def bare_assignment(text: str) -> tuple[int, str, str] | None:
    """(indent, name, number) of `NAME = 1e-5` (a plain number, nothing else)."""
    match = _ASSIGN_RE.match(code_part(text).rstrip())
    if match is None:
        return None
    return len(match.group(1)), match.group(2), match.group(3)


def branch_condition(text: str) -> tuple[int, str, str] | None:
    """(indent, `if`|`elif`, condition) of a one-line `if cond:` / `elif cond:`."""
    if _MAY_BRANCH_RE.match(text) is None:
        return None
    match = _BRANCH_RE.match(code_part(text).rstrip())
    if match is None:
        return None
    return len(match.group(1)), match.group(2), match.group(3).strip()


def tokens(condition: str) -> frozenset[str]:
    """Names and string literals of a condition, keywords left out."""
    return frozenset(t for t in _TOKEN_RE.findall(condition) if t not in _KEYWORDS)


@dataclass(frozen=True)
class Branch:
    """Where a line sits in an `if` chain: `conditions` are the chain's `if`/`elif`
    conditions up to and including its own (all of them for `else`), with their lines."""

    kind: str  # if | elif | else | none (not inside a branch)
    conditions: tuple[tuple[int, str], ...]


def enclosing_branch(lines: Mapping[int, str], number: int, limit: int = 40) -> Branch:
    """The branch directly holding line `number` (its innermost block opener)."""
    # The innermost opener is the first less-indented line above, as `openers` walks.
    for back, text in openers(lines, number, limit):
        branch = branch_condition(text)
        if branch is not None:
            return Branch(branch[1], (*_earlier_conditions(lines, back, branch[0]),
                                      (back, branch[2])))
        if _ELSE_RE.match(text):
            return Branch("else", _earlier_conditions(lines, back, indent_width(text)))
        return Branch("none", ())
    return Branch("none", ())


def _earlier_conditions(lines: Mapping[int, str], number: int, width: int
                        ) -> tuple[tuple[int, str], ...]:
    """The `if`/`elif` conditions above line `number` in the same chain (same indent)."""
    found: list[tuple[int, str]] = []
    for back in range(number - 1, max(0, number - 80), -1):
        text = lines.get(back)
        if text is None:
            break
        stripped = text.strip()
        if not stripped or stripped.startswith("#") or indent_width(text) > width:
            continue
        if indent_width(text) < width:
            break
        branch = branch_condition(text)
        if branch is None:
            break
        found.append((back, branch[2]))
        if branch[1] == "if":
            break
    return tuple(reversed(found))
