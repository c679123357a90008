"""Inline suppressions: `# ci-stability: ignore[rule-id] reason`.

A suppression covers findings on its own line and on the line below it, so it can
sit at the end of the flagged line or on a comment line just above.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from operator import itemgetter

from bot.core.snapshot import ChangedFile, LineKind, PullRequestSnapshot

_SUPPRESSION_RE = re.compile(r"#\s*ci-stability:\s*ignore\[([^\]\n]*)\][ \t]*(.*)$")
_REASON_LEAD = " \t-:–—"
MAX_SUPPRESSIONS_PER_FILE = 1000
_TEXT = itemgetter(1)  # of a DiffLine


@dataclass(frozen=True)
class Suppression:
    path: str
    line: int
    rules: tuple[str, ...]
    reason: str
    added: bool  # written in this PR (only those are reported when unused)

    def covers(self, rule: str, path: str | None, line: int | None) -> bool:
        return (
            path == self.path
            and line is not None
            and line in (self.line, self.line + 1)
            and rule in self.rules
        )


def _parse(text: str) -> tuple[tuple[str, ...], str] | None:
    if "ci-stability" not in text:
        return None
    match = _SUPPRESSION_RE.search(text)
    if match is None:
        return None
    rules = tuple(r.strip() for r in match.group(1).split(",") if r.strip())
    return rules, match.group(2).strip(_REASON_LEAD).strip()


def _file_lines(changed: ChangedFile) -> list[tuple[int, str, bool]]:
    if changed.head_lines is not None:
        added = changed.added_line_numbers
        return [
            (number, text, number in added)
            for number, text in enumerate(changed.head_lines, start=1)
            if "ci-stability" in text
        ]
    # One substring search per hunk (its lines joined at C speed) instead of one per
    # line: almost no hunk holds a suppression. A match across the joining newline is
    # impossible, the marker has none.
    return [
        (line.new_no, line.text, line.kind is LineKind.ADDED)
        for hunk in changed.hunks
        if "ci-stability" in "\n".join(map(_TEXT, hunk.lines))
        for line in hunk.lines
        if line.new_no is not None and "ci-stability" in line.text
    ]


def collect(snapshot: PullRequestSnapshot) -> list[Suppression]:
    found: list[Suppression] = []
    for changed in snapshot.files:
        if changed.status == "removed" or changed.binary:
            continue
        count = 0
        for number, text, is_added in _file_lines(changed):
            parsed = _parse(text)
            if parsed is None:
                continue
            count += 1
            if count > MAX_SUPPRESSIONS_PER_FILE:
                break
            rules, reason = parsed
            found.append(Suppression(changed.path, number, rules, reason, is_added))
    return found
