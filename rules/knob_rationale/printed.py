"""A knob on a line that only prints a command is not a setting.

CI scripts often echo the command they are about to run (`echo python generate.py
--tensor-parallel-size 2`) so the log shows it; editing that echo to match the real
command below changes nothing that runs. The real command, if it changed, is asked about
on its own line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PRINT_RE = re.compile(r"(?:echo|printf)\s")
MAX_CONTINUATIONS = 20  # a command spread over more lines than this is not walked back


def printed(lines: Mapping[int, str], number: int) -> bool:
    """Whether line `number` belongs to a shell `echo`/`printf` command, the line itself
    or the start of the backslash-continued command it is part of."""
    start = number
    for _ in range(MAX_CONTINUATIONS):
        above = lines.get(start - 1)
        if above is None or not above.rstrip().endswith("\\"):
            break
        start -= 1
    text = lines.get(start, "").lstrip()
    return _PRINT_RE.match(text) is not None
