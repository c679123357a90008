"""Full file texts recovered from GitHub's per-file patch, to save contents calls.

An added file's patch is its whole text, a removed file's patch its whole base
text, and a modified file's base is its head with the patch undone. Undoing the
patch also yields the base the diff was really made against (the merge base),
not whatever the base branch holds by now. Every function returns None when the
patch does not fit the text exactly; the caller then fetches the file instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.snapshot import Hunk, LineKind


def _whole_side(hunks: Sequence[Hunk], kind: LineKind) -> str | None:
    if len(hunks) != 1:
        return None
    hunk = hunks[0]
    lines = hunk.lines
    if not lines or any(line.kind is not kind for line in lines):
        return None
    if kind is LineKind.ADDED and (hunk.old_count != 0 or hunk.new_start != 1):
        return None
    if kind is LineKind.REMOVED and (hunk.new_count != 0 or hunk.old_start != 1):
        return None
    return "".join(f"{line.text}\n" for line in lines)


def added_text(hunks: Sequence[Hunk]) -> str | None:
    """The head text of an added file, when its patch holds all of it."""
    return _whole_side(hunks, LineKind.ADDED)


def removed_text(hunks: Sequence[Hunk]) -> str | None:
    """The base text of a removed file, when its patch holds all of it."""
    return _whole_side(hunks, LineKind.REMOVED)


def base_from_head(head: str, hunks: Sequence[Hunk]) -> str | None:
    """Undo the patch on the head text; None if the patch does not match it."""
    head_lines = head.splitlines(keepends=True)
    out: list[str] = []
    pos = 1  # next head line (1-based) not yet consumed
    for hunk in hunks:
        # A hunk without head lines sits *after* head line new_start.
        upto = hunk.new_start if hunk.new_count == 0 else hunk.new_start - 1
        if upto < pos - 1 or upto > len(head_lines):
            return None
        out.extend(head_lines[pos - 1 : upto])
        pos = upto + 1
        for line in hunk.lines:
            if line.kind is LineKind.REMOVED:
                out.append(f"{line.text}\n")
                continue
            if pos > len(head_lines) or head_lines[pos - 1].rstrip("\r\n") != line.text:
                return None
            if line.kind is LineKind.CONTEXT:
                out.append(head_lines[pos - 1])
            pos += 1
    out.extend(head_lines[pos - 1 :])
    return "".join(out)
