"""Entries of Python test lists: a call per test whose `disabled=True` / `skip=True`
keyword turns the test off (torchtitan's `OverrideDefinitions(..., "full_checkpoint",
disabled=True)` in tests/integration_tests, a `TestCase(..., skip=True)` table).

The entry is the call that encloses the keyword (found by balancing brackets upwards);
it counts as a test entry in a test file when it is a CamelCase call or names a test.
Its name is the last identifier-like string among its arguments (the test's id), else
its first string.
"""

from __future__ import annotations

import re

from rules.silenced_test.line_structure import SilencingView

_SCAN = 40  # lines looked at above the keyword
_CALL_RE = re.compile(r"([A-Za-z_][\w.]*)\s*\($")
_STRING_RE = re.compile(r"\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'")
_ID_RE = re.compile(r"[\w./:\[\]-]+")
_QUOTED_RE = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")


def _entry_call(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last[:1].isupper() or "test" in last.lower() or "suite" in last.lower()


def test_list_entry(view: SilencingView, n: int) -> tuple[str, str] | None:
    """(call, test name) of the test-list entry whose arguments hold line n; the call
    is "" when its line is not known (patch only)."""
    if "test" not in view.changed.path.lower():
        return None
    depth = 0
    strings: list[str] = []
    for m in range(n, max(0, n - _SCAN), -1):
        text = view.get(m)
        if text is None:
            # The entry's first lines are outside the patch: its id, if the arguments
            # seen so far name one ("" for an unknown call: a medium-confidence reading).
            ids = [s for s in strings if _ID_RE.fullmatch(s) and not s.startswith("-")]
            return ("", ids[-1]) if ids else None
        code = text.split("#", 1)[0] if "#" in text and "'" not in text and '"' not in text \
            else text
        strings[:0] = [a or b for a, b in _STRING_RE.findall(code)]
        bare = _QUOTED_RE.sub("", code)
        for i in range(len(bare) - 1, -1, -1):
            ch = bare[i]
            if ch in ")]}":
                depth += 1
            elif ch in "([{":
                if depth == 0:
                    call = _CALL_RE.search(bare[: i + 1])
                    if ch != "(" or call is None:
                        continue  # a list or dict argument of the entry: keep looking
                    if not _entry_call(call.group(1)):
                        return None
                    ids = [s for s in strings if _ID_RE.fullmatch(s) and not s.startswith("-")]
                    name = ids[-1] if ids else (strings[0] if strings else call.group(1))
                    return call.group(1), name
                depth -= 1
    return None
