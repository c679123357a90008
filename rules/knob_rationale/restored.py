"""A value put back to what a removed FIXME said it was before ("# FIXME: accuracy
threshold is temporarily lowered from 0.38 to 0.33" removed, 0.33 → 0.38): the
temporary change is over, and the comment the PR removes is the account of both
values. A removed comment that names the value without saying it was temporary (a
TODO to try it, a plain note) explains nothing here."""

from __future__ import annotations

import re

from bot.core.snapshot import Hunk, LineKind
from rules.analysis.knobs import Change

_TEMPORARY_RE = re.compile(
    r"\b(?:FIXME|TODO|XXX|HACK|temporar\w*|for now|until|workaround)\b", re.I)
_COMMENT_RE = re.compile(r"^\s*(?:#|//)\s?(.*)$")
_ABOVE = 4  # a comment block directly over the setting


def restored_by_removed_note(hunk: Hunk, change: Change) -> bool:
    """Whether the hunk removes a temporary-change comment over the old value that
    names the new value as the one before."""
    old, new = change.old, change.new
    if old is None or new is None:
        return False
    value = new.value.strip().strip("'\"")
    if not value or not any(ch.isdigit() for ch in value):
        return False
    first = min(old.lines or (old.line,))
    note = " ".join(
        match.group(1) for line in hunk.lines
        if line.kind is LineKind.REMOVED and line.old_no is not None
        and first - _ABOVE <= line.old_no < first
        and (match := _COMMENT_RE.match(line.text)) is not None)
    if not note or _TEMPORARY_RE.search(note) is None:
        return False
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", note) is not None
