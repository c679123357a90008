"""Markers that look like silencing but keep the test meaningful.

- one requirement marker swapped for another (`@require_torch_gpu` → `@require_non_cpu`):
  the test moves to where it can run, usually to more places, not out of CI;
- `xfail(raises=E)` on a test of E (`test_int4_raises`): the expected error is the check;
- a skip whose reason says the feature is retired ("deprecated and replaced by GRM")
  and not that the test fails.
"""

from __future__ import annotations

import re

from rules.silenced_test.line_structure import SilencingView

# Requirement markers: they say what a test needs, and swapping one for another moves it.
_REQUIREMENT_RE = re.compile(r"@(?:[\w.]+\.)?(?:requires?_|skip_?if_?no_?|skip_unless_)\w*")
_ERROR_TEST_RE = re.compile(r"rais|error|fail|invalid|reject|exception", re.I)
_RETIRED_RE = re.compile(r"deprecat\w*|obsolete|replaced by|no longer (?:supported|used|exists?)",
                         re.I)
_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)|^\s*class\s+(\w+)")


def not_a_silencing(view: SilencingView, n: int, stripped: str, old: str, kind: str,
                    call: str, silence_reason: re.Pattern[str]) -> bool:
    """Whether the marker on line n (replacing `old`) is one of the module's cases."""
    swapped = _REQUIREMENT_RE.match(stripped), _REQUIREMENT_RE.match(old.strip())
    if swapped[0] and swapped[1] and swapped[0].group(0) != swapped[1].group(0):
        return True
    if "xfail" in kind and "raises=" in call and _ERROR_TEST_RE.search(test_below(view, n)):
        return True
    return _RETIRED_RE.search(call) is not None and silence_reason.search(call) is None


def test_below(view: SilencingView, n: int) -> str:
    """The name of the test a decorator on line n sits on ("" when not in sight)."""
    for m in range(n + 1, n + 40):
        line = view.get(m)
        if line is None:
            return ""
        if match := _DEF_RE.match(line):
            return match.group(1) or match.group(2) or ""
    return ""
