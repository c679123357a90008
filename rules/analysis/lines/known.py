"""The head-side lines of a changed file that we know, as every rule reads them.

Known lines come from the full head text or, without it, from the patch (its added
and context lines). Rules look at one line at a time, so very long lines are cut to
`MAX_LINE` before any pattern runs over them: PR content is hostile.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from bot.core.snapshot import ChangedFile
from rules.analysis.memo import memoized

MAX_LINE = 20_000  # characters of one line that are scanned


@memoized
def known_lines(changed: ChangedFile) -> Mapping[int, str]:
    """Head lines by number, from the full text when known, else from the patch.

    Shared by every rule that asks (one mapping per file): read-only.
    """
    full = changed.head_lines
    return dict(enumerate(full, start=1)) if full is not None else changed.patch_head_lines


def indent_width(text: str) -> int:
    """Leading whitespace, tabs included (`yamlscan.indent_of` counts spaces only)."""
    return len(text) - len(text.lstrip())


def openers(lines: Mapping[int, str], number: int, limit: int) -> Iterator[tuple[int, str]]:
    """The lines opening the indented blocks around line `number`, innermost first.

    Each is the nearest line above that is less indented than the previous one (blank
    and `#` lines don't count), within `limit` lines and up to the first unknown line:
    Python's block structure read from a partial file.
    """
    current = indent_width(lines.get(number, ""))
    for back in range(number - 1, max(0, number - limit), -1):
        if current == 0:
            break
        text = lines.get(back)
        if text is None:
            break
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        ind = indent_width(text)
        if ind < current:
            yield back, text
            current = ind
