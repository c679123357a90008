"""Whether the test a skip turns off existed at the base: one the PR adds silences nothing.

A skip or xfail silences a test that used to run and gate CI. In a file the PR adds, or
on a test function or class the base does not define, nothing that ran before stops
running: the PR adds a test with some of its cases (or platforms) off, whatever the
reason says. A skip on any other test is judged as it always was. A test is not new when

- the base text of its file defines its name (any `def`/`class` of that name: a second
  test of the same name elsewhere in the file is taken for it, to keep firing);
- the PR removes a definition of that name in any file (a test moved into a new file,
  or a file re-created under another name that git did not pair as a rename);
- its `def` line replaces a removed `def`/`class` line of its hunk (a renamed test);
- or, without the base text, the patch shows its `def` line as context, or does not
  show it at all (the rule then cannot tell).

A whole-module marker (`pytestmark = pytest.mark.skip`) in an added file is new unless
the file defines a test the PR removes elsewhere. A skip inside the body of an existing
test fires even when its condition names only a parametrization the PR adds (`if mode
== "lazy": pytest.skip(...)` beside a new "lazy" value): the rule does not evaluate the
condition, and most such skips turn off cases that ran. A new `pytest.param(...,
marks=skip)` entry is a case of its own that never ran: new, unless it replaces a
removed line of its hunk or the PR removes a line naming its first value (a case moved).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rules.silenced_test.line_structure import SilencingView

_DEF_RE = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)")
_FIRST_VALUE_RE = re.compile(r"\(\s*(\"[^\"\n]{1,300}\"|'[^'\n]{1,300}')")


def defined_names(lines: Iterable[str]) -> frozenset[str]:
    """The names the lines define (`def x`, `async def x`, `class X`)."""
    return frozenset(m.group(1) for text in lines if "def " in text or "class " in text
                     if (m := _DEF_RE.match(text)))


def _defined_in(text: str, name: str) -> bool:
    return re.search(rf"^[ \t]*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b", text,
                     re.M) is not None


def added_test(view: SilencingView, target: tuple[str, int] | None,
               removed_defs: frozenset[str]) -> bool:
    """Whether the test `target` (name, line of its `def`; None for the whole module) is
    one the PR adds, so a skip on it silences nothing that ran before."""
    changed = view.changed
    if target is None:  # the whole module: new with its file, unless its tests moved in
        return changed.status == "added" and not (
            defined_names(view.lines.values()) & removed_defs)
    name, line = target
    if name in removed_defs:
        return False  # moved here from another file, or its def line rewritten
    if line in view.added and _DEF_RE.match(view.counterpart(line, view.get(line) or "")):
        return False  # a def line replacing a def line: a renamed test
    if changed.status == "added":
        return True
    if changed.base_text is not None:
        return not _defined_in(changed.base_text, name)
    return line in view.added  # context (or unseen) without the base text: it was there


def added_case(view: SilencingView, n: int, text: str) -> bool:
    """Whether the `pytest.param(...)` entry on added line n is a case the PR adds."""
    if n not in view.added or view.counterpart(n, text):
        return False  # an existing entry edited (marks added to it)
    value = _FIRST_VALUE_RE.search(text)
    return value is None or not any(value.group(1) in old for old in view.moved)
