"""Checks loosened without touching a number: a two-sided comparison made one-sided, a
rounding added before a comparison, and a bound assertion deleted.

Each pairs a removed line with an added line of the same hunk that names the same
operands, so a rewritten check is compared with the check it replaced:

- `assert abs(out - ref) < tol` → `assert out - ref < tol`: drift below the reference
  now passes (the `abs` went, every other name stayed);
- `assert score == EXPECTED` → `assert round(score, 2) == round(EXPECTED, 2)`: a
  tolerance of half a unit in the last kept digit, added without saying so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.core.snapshot import Hunk
from rules.analysis.lines import MAX_LINE, code_part, side_text, sides

_NAME_RE = re.compile(r"[A-Za-z_][\w.]*")
_ABS_RE = re.compile(r"(?<![\w.])(?:(?:torch|np|numpy|math|jnp)\.)?f?abs\s*\(")
_ROUND_RE = re.compile(r"(?<![\w])(?:(?:torch|np|numpy|jnp)\.)?round\s*\(|\.round\s*\(")
_CHECK_RE = re.compile(r"\bassert|[<>]=?|==")
_ABS_NAMES = frozenset({"abs", "fabs", "torch.abs", "np.abs", "numpy.abs", "math.fabs",
                        "jnp.abs"})
_ROUND_NAMES = frozenset({"round", "torch.round", "np.round", "numpy.round", "jnp.round"})


@dataclass(frozen=True)
class Rewritten:
    kind: str  # one-sided | rounding
    old: str
    new: str
    line: int


def _names(code: str) -> frozenset[str]:
    # `.round(` on a value reads as a name ending in `.round`: strip that suffix.
    return frozenset(n.removesuffix(".round") for n in _NAME_RE.findall(code))


def rewritten_checks(hunk: Hunk) -> Iterator[Rewritten]:
    """Checks of this hunk made one-sided or rounded, paired with the removed check.

    Removed checks are indexed by their names (without `abs`/`round`), so a hunk of
    many asserts costs one pass over each side, not a comparison of every pair.
    """
    if not hunk.removed or not hunk.added:
        return
    # Only an `abs` that goes or a `round` that comes can be read here: one search of
    # each side's joined text (kept with the side; context lines only widen the test).
    old_side, new_side = sides(hunk)
    if "abs" not in side_text(old_side)[1] and "round" not in side_text(new_side)[1]:
        return
    two_sided: dict[frozenset[str], list[str]] = {}
    exact: dict[frozenset[str], list[str]] = {}
    for line in hunk.removed:
        old = code_part(line.text[:MAX_LINE]).strip()
        if not _CHECK_RE.search(old):
            continue
        names = _names(old)
        if _ABS_RE.search(old):
            two_sided.setdefault(names - _ABS_NAMES, []).append(old)
        elif not _ROUND_RE.search(old) and len(names) >= 2:
            exact.setdefault(names - _ROUND_NAMES, []).append(old)
    if not two_sided and not exact:
        return
    for line in hunk.added:
        new = code_part(line.text[:MAX_LINE]).strip()
        if line.new_no is None or "assert" not in new.lower() or not _CHECK_RE.search(new):
            continue
        names = _names(new)
        if "<" in new and len(names) >= 2 and not _ABS_RE.search(new) and \
                two_sided.get(names):
            yield Rewritten("one-sided", two_sided[names].pop(0), new, line.new_no)
        elif _ROUND_RE.search(new) and exact.get(names - _ROUND_NAMES):
            yield Rewritten("rounding", exact[names - _ROUND_NAMES].pop(0), new, line.new_no)
