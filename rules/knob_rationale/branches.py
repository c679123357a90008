"""A knob in one branch of a conditional expression the PR adds whole
(`kwargs = {"model": m} if prompts is not None else {"pretrained": m, "batch_size": 16}`):
the branch is a new code path (a new mode the PR adds) and the value configures it;
nothing ran with another value before. The other branch holding the knob too makes
it a choice between two values, which is still asked about."""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import Setting

_CONDITIONAL_RE = re.compile(r"=[^=].*?\sif\s(?P<test>.+?)\selse\s(?P<other>.+)$", re.S)
_MAX_LINES = 6


def in_new_branch(changed: ChangedFile, new: Setting) -> bool:
    """Whether the knob sits in one branch only of a Python conditional expression
    whose statement (joined over `\\` continuations) the PR adds whole."""
    if not changed.path.endswith(".py"):
        return False
    added = changed.added_line_numbers
    first = new.line
    while first - 1 in added and first > new.line - _MAX_LINES and (
            changed.head_line(first - 1) or "").rstrip().endswith("\\"):
        first -= 1
    last = new.line
    while (changed.head_line(last) or "").rstrip().endswith("\\") and last < new.line + _MAX_LINES:
        last += 1
    lines = range(first, last + 1)
    if not all(n in added for n in lines):
        return False
    statement = " ".join((changed.head_line(n) or "").rstrip().rstrip("\\") for n in lines)
    match = _CONDITIONAL_RE.search(statement)
    if match is None:
        return False
    name = re.compile(rf"(?<![\w-]){re.escape(new.raw)}(?![\w-])")
    chosen = statement[: match.start("test")], match.group("other")
    return sum(1 for part in chosen if name.search(part)) == 1
