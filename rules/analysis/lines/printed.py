"""Whether a shell line only prints a command: `echo` / `printf` at the start of the
logical line it belongs to.

CI scripts echo the command they are about to run (`echo python generate.py \\` then
its continuation lines) so the log shows it. Such a line runs nothing: a knob on it is
not a setting, and commenting it out silences no test. A commented-out logical line is
read the same way, with the comment markers stripped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PRINT_RE = re.compile(r"(?:echo|printf)(?=\s|$)")
MAX_CONTINUATIONS = 20  # a command spread over more lines than this is not walked back


def _code(text: str, commented: bool) -> str | None:
    """The shell code of a line; None for a line that is not of the same kind (a live
    line above a commented-out one ends the logical line)."""
    text = text.strip()
    if commented:
        return text.lstrip("#").strip() if text.startswith("#") else None
    return text


def printed(lines: Mapping[int, str], number: int) -> bool:
    """Whether line `number` belongs to a shell `echo`/`printf` command: the line itself
    or the start of the backslash-continued command it is part of."""
    own = lines.get(number)
    if own is None:
        return False
    commented = own.lstrip().startswith("#")
    start = _code(own, commented) or ""
    for m in range(number - 1, number - 1 - MAX_CONTINUATIONS, -1):
        above = lines.get(m)
        code = None if above is None else _code(above, commented)
        if code is None or not code.endswith("\\"):
            break
        start = code
    return _PRINT_RE.match(start) is not None
