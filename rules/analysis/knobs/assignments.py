"""Knobs set by assignment on one line of code: `rtol=1e-3`, `TIMEOUT = 600`,
`export TIMEOUT=600`, `cfg.parallel.tp = 2`, `cfg['engine']['cache_max_entry_count'] = 0.6`,
and `limit: int = Field(` whose default follows on the next line.

The target as written is kept: a setting on an attribute or key of another object
(`mock_config.tp = 1`, `model['engine']['tp'] = 2`) is judged by what that object is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from rules.analysis.knobs.names import KnobFilter, normalize
from rules.analysis.knobs.values import scan_value

_ASSIGN_RE = re.compile(r"(?<![\w$.-])([A-Za-z_][\w.]*)\s*=(?![=~])")
_PY_ANNOTATED_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*:\s*[A-Za-z_][\w.\[\], ]*=(?!=)")
# `cfg['engine']['cache_max_entry_count'] = 0.6`: the last key is the knob.
_SUBSCRIPT_RE = re.compile(
    r"^\s*([A-Za-z_][\w.]*(?:\[[^\]\n]{1,80}\])*)\[\s*([\"'])([A-Za-z_][\w.-]*)\2\s*\]\s*=(?!=)")
# A call left open at the end of the line: its first argument is on the next one.
_OPEN_CALL_RE = re.compile(r"^[A-Za-z_][\w.]*\($")


class Assigned(NamedTuple):
    name: str  # normalized
    raw: str
    value: tuple[str, bool] | None  # None: the value is on the next line (`Field(`)
    target: str  # as written, e.g. `vllm_config.parallel_config.tensor_parallel_size`


def assignments(code: str, wanted: KnobFilter, python: bool) -> Iterator[Assigned]:
    """The wanted knobs a line of code assigns (it holds a `=`)."""
    if python and "[" in code:
        subscript = _SUBSCRIPT_RE.match(code)
        if subscript is not None:
            raw = subscript.group(3)
            name = normalize(raw)
            if wanted(name):
                scanned = scan_value(code, subscript.end(), words=False)
                if scanned is not None:
                    yield Assigned(name, raw, scanned, subscript.group(0).split("=")[0].strip())
            return
    annotated = _PY_ANNOTATED_RE.match(code) if python else None
    matches = (annotated,) if annotated else _ASSIGN_RE.finditer(code)
    for match in matches:
        target = match.group(1)
        raw = target.rsplit(".", 1)[-1]
        name = normalize(raw)
        if not wanted(name):
            continue
        if python and _OPEN_CALL_RE.match(code[match.end():].strip()):
            yield Assigned(name, raw, None, target)
            continue
        scanned = scan_value(code, match.end(), words=not python)
        if scanned is not None:
            yield Assigned(name, raw, scanned, target)
