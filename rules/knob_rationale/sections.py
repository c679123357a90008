"""A new section of settings: module-level Python assignments added under a section
heading of their own.

A configuration module read by a framework (a Sphinx `conf.py`, a settings module)
gains the options of a feature the PR introduces as a section: a heading comment
(`# -- Options for linkcheck builder -----`) and the feature's assignments below it
(`linkcheck_timeout = 15`, `linkcheck_retries = 2`). That is new configuration, like a
new YAML mapping or shell block: nothing had another value before. The section is
new when every line from the heading down to the setting is added with no code
removed in their place, every statement at column 0 on the way is an assignment, and
the setting's name is new to the file and read by no other line the PR adds (a
constant that replaces a literal elsewhere is a retune of that literal).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.knobs import Setting
from rules.analysis.lines import known_lines
from rules.knob_rationale.units import added_numbers, inserted

# `# -- Options for linkcheck builder ----`, `# ==== Linkcheck ====`, `### Linkcheck ###`:
# a title between two rules (a comment that starts with a flag, `# --force …`, is none).
_HEADING_RE = re.compile(r"^#+\s*[-=#*~]{2,}\s+[A-Za-z][^\n]{0,200}?\s[-=#*~]{2,}\s*$")
_RULE_RE = re.compile(r"^#+\s*[-=#*~]{4,}\s*$")  # a rule over or under a title line
_ASSIGNMENT_RE = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=]{1,200})?=(?!=)")
_CLOSER_RE = re.compile(r"^[\])}]+,?\s*(?:#.*)?$")
_MAX_WALK = 120  # lines from the setting up to its heading
_MAX_SCAN = 50_000  # added lines of the PR searched for the name


def in_new_section(snapshot: PullRequestSnapshot, changed: ChangedFile,
                   setting: Setting) -> bool:
    """Whether a Python setting is one of the assignments of a section the PR adds."""
    if not changed.path.endswith(".py"):
        return False
    head, added = known_lines(changed), added_numbers(changed)
    start = _statement(head, setting.line)
    match = _ASSIGNMENT_RE.match(head.get(start, "")) if start is not None else None
    if start is None or match is None:
        return False
    heading = _heading_above(head, added, start)
    if heading is None or not inserted(changed, heading, setting.line):
        return False
    name = match.group(1)
    base = changed.base_text
    if base is None:
        base = "\n".join(line.text for line in changed.removed_lines)
    word = re.compile(rf"\b{re.escape(name)}\b")
    if word.search(base):
        return False  # the name was there: a value moved or retuned, not a new option
    return not _read_elsewhere(snapshot, changed, word, heading, setting.line)


def _statement(lines: Mapping[int, str], number: int) -> int | None:
    """The column-0 line of the statement holding `number` (an item of a list opens on
    the assignment line above)."""
    for n in range(number, max(0, number - _MAX_WALK), -1):
        text = lines.get(n)
        if text is None:
            return None
        if text.strip() and not text[0].isspace() and not text.startswith("#"):
            return n if n == number or not _CLOSER_RE.match(text) else None
    return None


def _heading_above(lines: Mapping[int, str], added: frozenset[int], start: int) -> int | None:
    """The section heading above `start`, every line between them added and every
    statement at column 0 an assignment (or the bracket closing one)."""
    for n in range(start - 1, max(0, start - _MAX_WALK), -1):
        text = lines.get(n)
        if text is None or n not in added:
            return None
        if text.startswith("#") and (_HEADING_RE.match(text) or (
                not _RULE_RE.match(text) and _RULE_RE.match(lines.get(n - 1, "") or ""))):
            return n
        if text.strip() and not text[0].isspace() and not text.startswith("#") and not (
                _ASSIGNMENT_RE.match(text) or _CLOSER_RE.match(text)):
            return None  # a function, an import, a branch: not a block of settings
    return None


def _read_elsewhere(snapshot: PullRequestSnapshot, changed: ChangedFile,
                    word: re.Pattern[str], first: int, last: int) -> bool:
    """Whether a line the PR adds outside the section (in any file) names the setting."""
    scanned = 0
    for other in snapshot.files:
        for line in other.added_lines:
            scanned += 1
            if scanned > _MAX_SCAN:
                return True  # too large to tell: say nothing is new
            if other is changed and line.new_no is not None and first <= line.new_no <= last:
                continue
            if word.search(line.text[:2_000]):
                return True
    return False
