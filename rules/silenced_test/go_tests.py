"""Go tests silenced: `t.Skip("…")`, Ginkgo `Skip("…")`, pending `XIt`/`PIt` specs.

A skip inside an `if` (`if testing.Short()`, `if os.Getenv(…) == ""`) or one that names
what the test needs is a gate; an unconditional skip, or one whose reason says the test
fails, silences it. A skip in a test the PR adds is a gate unless its reason says it fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rules.silenced_test.gates import call_text, capability_gate
from rules.silenced_test.line_structure import SilencingView
from rules.silenced_test.silencing_detectors import NOT_RUN, SILENCE_REASON_RE, Hit

_SKIP_RE = re.compile(
    r"\b(?:t|b|tb|s|suite|ginkgo|g)\.Skip(?:f|Now)?\s*\(|(?<![\w.])Skip\s*\(\s*[\"`]"
)
_PENDING_RE = re.compile(r"^\s*(?:ginkgo\.)?[XP](?:It|Describe|Context|When|Specify|Entry)\s*\(")
_SPEC_RE = re.compile(
    r"^\s*func\s+(?:\([^)]*\)\s*)?(Test\w+)|^\s*(?:ginkgo\.)?[XP]?(?:It|Describe|Context|When|"
    r"Specify)\s*\(\s*\"([^\"]{1,120})\""
)
_IF_RE = re.compile(r"^\s*(?:\}\s*else\s+)?if\b.*\{\s*$")
_GATE_RE = re.compile(r"short mode|testing\.Short|not set|unset|not configured|\benv\b", re.I)


def go_hits(view: SilencingView, n: int, text: str) -> Iterator[Hit]:
    pending = _PENDING_RE.match(text)
    if pending is None and _SKIP_RE.search(text) is None:
        return
    spec = _SPEC_RE.match(text) if pending else None
    name, start = (next(g for g in spec.groups() if g), n) if spec else ("", 0)
    for m, line in ([] if spec else view.back(n)):
        if found := _SPEC_RE.match(line):
            name, start = next(g for g in found.groups() if g), m
            break
    call = call_text(view, n, text)
    failing = SILENCE_REASON_RE.search(call) is not None
    new = view.changed.status == "added" or start in view.added
    if not failing and (new or (not pending and _gated(view, n, call))):
        return
    kind = pending.group(0).strip().rstrip("(") if pending else "Skip()"
    where = f" on `{name}`" if name else ""
    yield Hit(n, f"`{kind}`", NOT_RUN, name, where=where)


def _gated(view: SilencingView, n: int, call: str) -> bool:
    """A skip inside an `if`, or one that names a capability or a missing setting."""
    above = next((line for _, line in view.back(n)), "")
    return bool(_IF_RE.match(above)) or capability_gate(call, SILENCE_REASON_RE) or \
        _GATE_RE.search(call) is not None
