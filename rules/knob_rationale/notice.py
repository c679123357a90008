"""What one knob-rationale notice says and spans: the knobs of one hunk (or one repeated
retune), counted, with the lines it also occurs on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import Change, value_lines
from rules.analysis.lines import comment_text, known_lines


class Notice(NamedTuple):
    message: str
    line: int
    end_line: int | None
    key: str
    details: tuple[tuple[str, str], ...]


def notice(changed: ChangedFile, changes: Sequence[Change]) -> Notice:
    head = known_lines(changed)
    counts = Counter(c.describe() for c in changes)
    listed = ", ".join(f"{d} (×{n})" if n > 1 else d for d, n in counts.items())
    plural = "s" if len(counts) > 1 else ""
    message = (
        f"Tuning knob{plural} changed without a stated reason: {listed}. Say why next to "
        "the value or in the PR description (the OOM, timeout or flake it fixes), so the "
        "next retune knows what it protects."
    )
    others = sorted({c.setting.line for c in changes} - {changes[0].setting.line})
    if len(changes) > len(counts) and others:
        shown = ", ".join(str(n) for n in others[:10]) + (", …" if len(others) > 10 else "")
        message += f" The same change is also at line{'s' if len(others) > 1 else ''} {shown}."
    in_block = [
        c for c in changes
        if any(comment_text(head.get(n, "")) and n in value_lines(changed)
               for n in c.setting.lines)
    ]
    if in_block:
        message += (
            " The `#` text on the knob's line is inside a YAML block scalar, so it is part "
            "of the value, not a comment: move it above the key."
        )
    first = changes[0].setting.line
    # The notice spans the knobs it lists that sit together (one entry's lines).
    end = max((c.setting.line for c in changes if first <= c.setting.line <= first + 8),
              default=first)
    return Notice(
        message, first, end if end > first else None,
        "knobs:" + ";".join(sorted(c.describe() for c in changes)),
        tuple((c.setting.raw, c.describe()[len(c.setting.raw) + 1 :]) for c in changes),
    )
