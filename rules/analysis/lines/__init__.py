"""Lines of a changed file as rules read them: the head lines we know (full text or
patch), a hunk's two sides, the `#` comment on a line (THE comment stripper), and whether a
shell line only prints a command."""

from rules.analysis.lines.comments import code_part, comment_near, comment_text
from rules.analysis.lines.hunk_sides import (
    SideLine,
    removed_runs,
    side_contains,
    side_text,
    sides,
)
from rules.analysis.lines.known import MAX_LINE, indent_width, known_lines, openers
from rules.analysis.lines.printed import printed

__all__ = [
    "MAX_LINE", "SideLine", "code_part", "comment_near", "comment_text", "indent_width",
    "known_lines", "openers", "printed", "removed_runs", "side_contains", "side_text", "sides",
]
