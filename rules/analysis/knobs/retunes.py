"""Which paired settings are retunes: the pairs of one hunk checked against the file and
the PR around them.

- A value is paired only within one test function: when the diff lines up a deleted
  test's threshold with the next test's, the pair is split, and the head value is
  compared with its own function's value in the base (when the base text is known).
- A setting that appears without a counterpart is new configuration when its entry is
  new (`entries.in_new_entry`) or the object it sets was created by this PR, and not a
  change at all when the same name and value are removed elsewhere in the PR (moved).
- Values set on mocks in unit tests are test scaffolding, not knobs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.knobs.changes import Change
from rules.analysis.knobs.entries import created_here, in_new_entry, owner
from rules.analysis.knobs.names import KnobFilter
from rules.analysis.knobs.settings import Setting, extract, holds_yaml_keys
from rules.analysis.knobs.values import same_value
from rules.analysis.lines import sides
from rules.analysis.memo import memoized

_UNIT_TEST_DIR_RE = re.compile(r"(?:^|/)(?:ut|unit|unit_?tests?|unittests?)/")
_MOCK_RE = re.compile(r"mock", re.I)


def split_across_owners(changed: ChangedFile, changes: Iterable[Change]) -> list[Change]:
    """The changes with every pair whose two values live in different test functions
    split, and unpaired head values paired with their own function's base value."""
    out: list[Change] = []
    for change in changes:
        old, new = change
        if old is not None and new is not None:
            before, after = owner(changed, False, old.line), owner(changed, True, new.line)
            if before and after and before != after:
                out.append(Change(old, None))
                change = Change(None, new)
        if change.old is None and change.new is not None:
            base = _counterpart(changed, change.new)
            if base is not None:
                change = Change(base, change.new)
        out.append(change)
    return out


def _counterpart(changed: ChangedFile, new: Setting) -> Setting | None:
    """The same setting in the base version of the head value's own test function."""
    name = owner(changed, True, new.line)
    lines = changed.base_lines
    if not name or lines is None:
        return None
    span = _function_span(lines, name)
    if span is None:
        return None
    first, last = span
    side = [(n, lines[n - 1], True) for n in range(first, last + 1)]
    found = [s for s in extract(side, _only(new.name), yaml_keys=False, python=True,
                                only={new.name})
             if s.name == new.name and s.label == new.label]
    return found[0] if len(found) == 1 else None


def _only(name: str) -> KnobFilter:
    return KnobFilter((name,))


def _function_span(lines: Sequence[str], name: str) -> tuple[int, int] | None:
    pattern = re.compile(rf"^(\s*)(?:async\s+)?def\s+{re.escape(name)}\b")
    for i, text in enumerate(lines):
        match = pattern.match(text)
        if match is None:
            continue
        indent = len(match.group(1))
        end = i + 1
        while end < len(lines) and (not lines[end].strip()
                                    or len(lines[end]) - len(lines[end].lstrip()) > indent):
            end += 1
        return i + 1, end
    return None


class MovedSettings:
    """Settings this PR removes anywhere, so a setting that only moved is not news."""

    def __init__(self, snapshot: PullRequestSnapshot, wanted: KnobFilter) -> None:
        self._snapshot = snapshot
        self._wanted = wanted
        self._removed: dict[str, list[str]] | None = None

    def removed(self, setting: Setting) -> bool:
        if self._removed is None:
            self._removed = {}
            for changed in self._snapshot.files:
                for s in _removed_settings(changed, self._wanted):
                    self._removed.setdefault(s.name, []).append(s.value)
        return any(same_value(v, setting.value) for v in self._removed.get(setting.name, ()))


@memoized
def _removed_settings(changed: ChangedFile, wanted: KnobFilter) -> list[Setting]:
    yaml_keys = holds_yaml_keys(changed.path)
    python = changed.path.endswith((".py", ".pyi"))
    out: list[Setting] = []
    for hunk in changed.hunks:
        if not hunk.removed:
            continue
        old, _ = sides(hunk)
        out += [s for s in extract(old, wanted, yaml_keys=yaml_keys, python=python) if s.changed]
    return out


def scaffolding(changed: ChangedFile, setting: Setting) -> bool:
    """A value set on an attribute of a mock or mocked config in a Python unit test."""
    target = setting.target
    if "." not in target and "[" not in target:
        return False
    if not changed.path.endswith(".py") or "test" not in changed.path.lower():
        return False
    root = target.split(".", 1)[0].split("[", 1)[0]
    if root in ("self", "cls", "os"):
        return False
    if _MOCK_RE.search(root) or _UNIT_TEST_DIR_RE.search(changed.path):
        return True
    text = changed.head_text or "\n".join(line.text for line in changed.added_lines)
    assigned = re.search(rf"^\s*{re.escape(root)}\s*=\s*[^\n]*mock", text, re.M | re.I)
    return assigned is not None


def new_configuration(changed: ChangedFile, setting: Setting, moved: MovedSettings) -> bool:
    """Whether a setting without a base counterpart is new configuration or merely moved,
    rather than a knob added to an existing config."""
    if in_new_entry(changed, setting.line):
        return True
    if setting.target and created_here(changed, setting.target):
        return True
    return moved.removed(setting)
