"""Tolerances moved into names: `torch.allclose(out, ref, 1e-4, 1e-5)` rewritten as
`assert_close(out, ref, atol=ATOL, rtol=RTOL)`, with `ATOL = 1e-5` set once at module
level, perhaps per device (`if is_hpu_available(): ATOL = 1e-4 else: ATOL = 1e-5`).

The new name is not a tolerance added to an exact check: it is judged against the
literal values of the calls it replaced (the removed check calls of the hunks that now
pass the name), kind by kind (`atol` against `atol`, positional or keyword):

- a head value equal to or tighter than the loosest old one says nothing;
- a value in a branch whose condition is new to the file (a device this PR adds
  support for: a name or string the base never mentions) is that device's first
  tolerance, not a loosening of an existing gate;
- replaced calls that passed no value of this kind used their function's default
  (`torch.allclose`: rtol=1e-05, atol=1e-08), not an exact check: not compared, since
  the diff holds no old value to quote;
- a name used only by brand-new checks (a new test) says nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import number
from rules.analysis.lines import MAX_LINE, code_part, known_lines
from rules.analysis.pycode import Branch, bare_assignment, enclosing_branch, split_args, tokens

_CALL_RE = re.compile(
    r"([\w.]*?(?:allclose|assert_close|isclose|approx|assert_almost_equal|assertAlmostEqual))"
    r"\s*\(")
# Positional tolerances after the compared values: (how many compared values, names).
_POSITIONAL = {"allclose": (2, ("rtol", "atol")), "isclose": (2, ("rtol", "atol")),
               "assert_allclose": (2, ("rtol", "atol")), "approx": (1, ("rtol", "atol"))}
_KEYWORDS = {"atol": "atol", "abs": "atol", "abs_tol": "atol", "delta": "atol",
             "rtol": "rtol", "rel": "rtol", "rel_tol": "rtol"}
_KW_RE = re.compile(r"^([A-Za-z_]\w*)\s*=\s*(.+)$")


@dataclass(frozen=True)
class MovedTolerance:
    """A head value of the name looser than the literal its replaced calls passed."""

    which: str  # atol | rtol
    old: str
    call: str  # the replaced call's function, as written
    looser: bool


def call_tolerances(text: str) -> list[tuple[str, dict[str, str]]]:
    """(function, {atol|rtol: value as written}) of each check call on a line."""
    found: list[tuple[str, dict[str, str]]] = []
    code = code_part(text[:MAX_LINE])
    for match in _CALL_RE.finditer(code):
        args = split_args(code[match.end():])
        if args is None:
            continue
        func = match.group(1)
        compared, names = _POSITIONAL.get(func.rsplit(".", 1)[-1], (0, ()))
        values: dict[str, str] = {}
        positional = [a for a in args if a and _KW_RE.match(a) is None]
        for which, value in zip(names, positional[compared:], strict=False):
            values[which] = value
        for arg in args:
            keyword = _KW_RE.match(arg)
            if keyword is not None and keyword.group(1) in _KEYWORDS:
                values[_KEYWORDS[keyword.group(1)]] = keyword.group(2).strip()
        found.append((func, values))
    return found


def _kind_of_use(text: str, name: str) -> str | None:
    """`atol` when the line passes `atol=NAME` (or the name says so), else None."""
    for func, values in call_tolerances(text):
        del func
        for which, value in values.items():
            if value == name:
                return which
    lowered = name.lower()
    return next((w for w in ("atol", "rtol") if w in lowered), None)


def _new_condition(changed: ChangedFile, branch: Branch, added: frozenset[int],
                   pr_text: str) -> bool:
    """A branch for a case this PR adds: its own condition is an added line naming a
    check the base never mentions (`is_hpu_available()`, newly imported), or a string
    new to the file that the PR's title or description names (`"hpu"` in "HPU support").
    A string alone (`== "cuda"`) may be a device that ran all along."""
    if branch.kind in ("none", "else") or not branch.conditions:
        return False
    line, condition = branch.conditions[-1]
    if line not in added:
        return False
    base = changed.base_text
    if base is None:
        base = "\n".join(ln.text for hunk in changed.hunks for ln in hunk.lines
                         if ln.old_no is not None)
    lowered = pr_text.lower()
    for token in tokens(condition):
        if re.search(rf"(?<![\w]){re.escape(token)}(?![\w])", base) is not None:
            continue
        word = token.strip("\"'")
        if word == token or (word and re.search(rf"\b{re.escape(word.lower())}\b", lowered)):
            return True
    return False


def judge(changed: ChangedFile, name: str, value: str, line: int, pr_text: str = ""
          ) -> MovedTolerance | None:
    """How the new assignment `name = value` on head line `line` compares with the
    tolerances its name replaced; None when it replaced none (a new check, or a name
    this reader does not see used): the caller then says nothing."""
    lines = known_lines(changed)
    added = changed.added_line_numbers
    olds: dict[str, list[tuple[str, str]]] = {}
    replaced_any = False
    which: str | None = None
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])")
    for hunk in changed.hunks:
        uses = [ln.text for ln in hunk.added if ln.new_no != line and pattern.search(ln.text)
                and bare_assignment(ln.text) is None]
        if not uses:
            continue
        which = which or next((k for k in (_kind_of_use(u, name) for u in uses) if k), None)
        for removed in hunk.removed:
            for func, values in call_tolerances(removed.text):
                replaced_any = True
                for kind, old in values.items():
                    olds.setdefault(kind, []).append((old, func))
    if not replaced_any or which is None:
        return None
    old_values = [(number(v), v, f) for v, f in olds.get(which, []) if number(v) is not None]
    new = number(value)
    if new is None:
        return None
    if not old_values:
        # The replaced calls relied on their function's default (allclose's rtol=1e-05,
        # say) or set only other kinds: no old value in the diff to set this one against.
        return MovedTolerance(which, "", "", looser=False)
    loosest = max(old_values, key=lambda item: item[0] or 0.0)
    looser = new > (loosest[0] or 0.0) and not _new_condition(
        changed, enclosing_branch(lines, line), added, pr_text)
    return MovedTolerance(which, loosest[1], loosest[2], looser)
