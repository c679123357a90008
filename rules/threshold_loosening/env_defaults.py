"""Gates read from the environment with a default in code:
`float(os.environ.get("GSM8K_THRESHOLD", "0.82"))`, `os.getenv("RTOL", 1e-3)`.

The variable's name is the knob and the default is its value when CI sets nothing, so
a lowered default lowers the gate. Paired by variable name within a hunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from bot.core.snapshot import Hunk
from rules.analysis.knobs import Categories, normalize, number
from rules.analysis.lines import MAX_LINE, side_text, sides

_ENV_DEFAULT_RE = re.compile(
    r"(?:environ\.get|getenv)\(\s*[\"']([A-Za-z_]\w{0,80})[\"']\s*,\s*"
    r"[\"']?([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)[\"']?\s*\)")


class EnvDefault(NamedTuple):
    kind: str
    name: str
    old: str
    new: str
    line: int


def _defaults(texts: list[tuple[int | None, str]]) -> dict[str, tuple[int | None, str]]:
    found: dict[str, tuple[int | None, str]] = {}
    for no, text in texts:
        if "env" not in text:
            continue
        for match in _ENV_DEFAULT_RE.finditer(text[:MAX_LINE]):
            found.setdefault(match.group(1), (no, match.group(2)))
    return found


def env_default_loosenings(hunk: Hunk, categories: Categories) -> Iterator[EnvDefault]:
    if not hunk.removed or not hunk.added or "env" not in side_text(sides(hunk)[1])[1]:
        return  # one search of the head side's joined text: most hunks read no env var
    news = _defaults([(line.new_no, line.text) for line in hunk.added])
    if not news:
        return
    olds = _defaults([(line.old_no, line.text) for line in hunk.removed])
    for name, (no, value) in news.items():
        if name not in olds or no is None:
            continue
        kind = categories.kind(normalize(name))
        before, after = number(olds[name][1]), number(value)
        if kind is None or before is None or after is None or (kind == "timeout" and (
                before <= 0 or after <= 0)):
            continue
        if (after < before) if kind in ("gate", "samples") else (after > before):
            yield EnvDefault(kind, name, olds[name][1], value, no)
