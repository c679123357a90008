"""A test taken out of one place that lives on in another: renamed or split (its body
under a helper that new tests call), or moved into a new file that CI runs."""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile
from rules.silenced_test.test_commands import Runs

_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(")


def survives(name: str, added: list[str], words: frozenset[str], lines: frozenset[str]) -> bool:
    """A deleted `def test_x` whose body lives on: renamed (`_test_x` as a helper,
    `test_x_low_concurrency`: an added identifier that holds the name), or its `def`
    line rewritten in place into a helper that an added line calls."""
    renamed = re.compile(rf"(?:^|_){re.escape(name)}(?:_|$)")  # not `test_xyz` for `test_x`
    if any(renamed.search(word) for word in words if name in word):
        return True
    helpers = [m.group(1) for t in added if (m := _DEF_RE.match(t))]
    calls = [re.compile(rf"(?<![\w]){re.escape(helper)}\s*\(") for helper in helpers]
    return any(call.search(line) and not _DEF_RE.match(line) for call in calls for line in lines)


def moved_into(target: str, files: tuple[ChangedFile, ...], new_test_files: tuple[str, ...],
               head: Runs) -> bool:
    """A test taken off one job's explicit list and moved (the description says so)
    with its `def` into a new test file under a directory a head command runs whole."""
    path, _, name = target.partition("::")
    source = next((f for f in files if f.path == path), None)
    if not name or source is None or not new_test_files:
        return False
    deleted = any(re.match(rf"\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", ln.text)
                  for ln in source.removed_lines)
    return deleted and any(head.runs("", new) for new in new_test_files)

