"""Knobs of code the PR uncomments: a test block brought back (`# TP_SIZE=2 pytest …`
removed, `TP_SIZE=2 pytest …` added) had its values written down already.

The extractor skips comments, so a re-enabled line's knob looks added. Its base
counterpart is the same knob on a commented-out removed line of the same hunk: the
same value there is no change at all, and another value is the retune to ask about
(`TP_SIZE 4 → 2` while re-enabling), not a knob "(new)".
"""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import Setting, extract, holds_yaml_keys
from rules.analysis.knobs.names import KnobFilter
from rules.analysis.memo import memoized

# A commented-out line: its indentation, the marker, one optional space, the code.
_COMMENTED_RE = re.compile(r"^([ \t]*)(?:#+|//)[ \t]?(\S.*)$")
_MAX_LINE = 2000


def commented_counterpart(
    changed: ChangedFile, hunk: Hunk, new: Setting, wanted: KnobFilter,
) -> Setting | None:
    """The same knob on a commented-out line this hunk removes (the nearest one), or
    None when the hunk uncomments no line setting it."""
    found = [s for s in _commented_settings(hunk, changed.path, wanted)
             if s.name == new.name and s.label == new.label]
    if not found:
        return None
    return min(found, key=lambda s: abs(s.line - new.line))


@memoized
def _commented_settings(hunk: Hunk, path: str, wanted: KnobFilter) -> list[Setting]:
    side = []
    for line in hunk.removed:
        match = _COMMENTED_RE.match(line.text[:_MAX_LINE])
        if match is not None and line.old_no is not None:
            side.append((line.old_no, match.group(1) + match.group(2), True))
    if not side:
        return []
    return extract(side, wanted, yaml_keys=holds_yaml_keys(path),
                   python=path.endswith((".py", ".pyi")))
