"""`#` comments on a line: the code before one, the text of one, one near a change.

Line-based on purpose (quotes are not respected): rules read partial, invalid or
hostile files, and a `#` that starts a comment in YAML, shell and Python alike is one
at the start of the line or after whitespace, never `a#b` or a URL fragment. The
quote-aware readers (`yamlscan.strip_comment` for YAML values, block-scalar-comment's
`comment_start`) answer a narrower question for one syntax.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from bot.core.snapshot import ChangedFile
from rules.analysis.lines.known import MAX_LINE, known_lines

_COMMENT_START_RE = re.compile(r"(?:^|\s)#")
# A `# ci-stability:` pragma is an instruction to the bot, not an explanation.
_COMMENT_RE = re.compile(r"(?:^|\s)#(?!\s*ci-stability:)\s*(\S.*)$")


def code_part(text: str) -> str:
    """The text before its first `#` comment, unstripped (the whole text without one)."""
    if "#" not in text:
        return text
    match = _COMMENT_START_RE.search(text)
    return text[: match.start()] if match else text


def comment_text(line: str) -> str | None:
    """The text of the line's `#` comment, stripped; None without one."""
    match = _COMMENT_RE.search(line)
    return match.group(1).strip() if match else None


def comment_near(
    changed: ChangedFile, numbers: Iterable[int], radius: int = 2,
    keep: Callable[[int, str], bool] | None = None,
) -> tuple[int, str] | None:
    """A `#` comment of 3+ characters within `radius` known head lines of any of `numbers`
    (the lines included), and that `keep(line, comment)` accepts when given."""
    head = known_lines(changed)
    for number in numbers:
        for n in range(max(1, number - radius), number + radius + 1):
            text = head.get(n)
            comment = comment_text(text[:MAX_LINE]) if text is not None and "#" in text else None
            if comment and len(comment) >= 3 and (keep is None or keep(n, comment)):
                return n, comment
    return None
