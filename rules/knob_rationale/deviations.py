"""A `threshold` beside a `baseline` is the deviation allowed from it: a gate.

Benchmark configs give each case a measured `baseline` and the `threshold` by which a
run may deviate from it (`baseline: 86.67`, `threshold: 5`). Widening or narrowing that
band changes how easily the check passes, which is threshold-loosening's question; it
is not a serving knob tuned against an OOM or a timeout, and asking "why 5 → 10" as a
retune would be a second, vaguer notice about the same line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from rules.analysis.knobs import Setting

_BASELINE_RE = re.compile(r"^\s*(?:-\s+)?[\"']?baseline[\w-]*[\"']?\s*[:=]", re.I)
_SAME_LINE_RE = re.compile(r"[\"'{,\s]baseline[\w-]*[\"']?\s*[:=]", re.I)
_REACH = 12  # lines either side searched for the sibling key


def beside_baseline(lines: Mapping[int, str], setting: Setting) -> bool:
    """Whether the `*threshold` knob at `setting.line` sits in the same mapping as a
    `baseline` key (a sibling at its indentation, or on its own line)."""
    if not setting.name.endswith("threshold"):
        return False
    own = lines.get(setting.line)
    if own is None:
        return False
    if _SAME_LINE_RE.search(own[:400]):
        return True
    indent = len(own) - len(own.lstrip())
    for step in (-1, 1):
        for n in range(setting.line + step, setting.line + step * (_REACH + 1), step):
            text = lines.get(n)
            if text is None:
                break
            body = text.lstrip()
            if not body or body.startswith("#"):
                continue
            depth = len(text) - len(body)
            if depth < indent:
                break  # the mapping ends
            if depth == indent and _BASELINE_RE.match(text[:400]):
                return True
    return False
