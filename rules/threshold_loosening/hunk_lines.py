"""What a setting's lines say in their hunk: the call a tolerance sits in, a bare
assignment, a Buildkite `retry:` block above a `limit`."""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import holds_yaml_keys
from rules.analysis.pycode import bare_assignment

_CALL_HEAD_RE = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_RETRY_RE = re.compile(r"\b(?:retry|automatic|manual|exit_status)\b")


def tolerance_on_existing_check(changed: ChangedFile, removed: list[str], line_text: str) -> bool:
    """A tolerance added to a check that was already there (not to a brand-new one)."""
    if holds_yaml_keys(changed.path):
        return True
    head = _CALL_HEAD_RE.search(line_text)
    if head is None:
        return bool(removed)  # a continuation line inside a call that was edited
    return any(head.group(1) in text for text in removed)


def assigned(hunk: Hunk, old_no: int) -> bool:
    """The base line `old_no` is a bare `NAME = number` (not a call's `atol=1e-5`)."""
    text = next((line.text for line in hunk.lines if line.old_no == old_no), "")
    return bare_assignment(text) is not None


def retry_limit(hunk: Hunk, number_: int) -> bool:
    above = [line.text for line in hunk.lines
             if line.new_no is not None and number_ - 4 <= line.new_no < number_]
    return any(_RETRY_RE.search(text) for text in above)


def line_text(hunk: Hunk, number_: int) -> str:
    return next((line.text for line in hunk.lines if line.new_no == number_), "")
