"""The inline review: comments on diff lines only, suggestions where exact. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bot.core.findings import Confidence, Finding, Severity
from bot.core.report import Report
from bot.core.snapshot import ChangedFile, Hunk, PullRequestSnapshot
from bot.render import markers, mdsafe

MAX_COMMENTS = 30  # GitHub documents no limit, but large reviews get refused as spam
BODY_LIMIT = 60_000
_ICON = {Severity.ERROR: "❌", Severity.WARNING: "⚠️", Severity.NOTICE: "ℹ️"}
# The rule named at the head of an inline comment (`comment_body`), read back for a 👎.
_RULE_RE = re.compile(r"\A\S+ \*\*`([A-Za-z0-9][A-Za-z0-9_.:-]*)`\*\*: ")


@dataclass(frozen=True)
class ReviewPlan:
    comments: tuple[dict[str, Any], ...]
    fingerprints: tuple[str, ...]  # findings placed inline (posted once this review is)
    leftover: tuple[Finding, ...]  # new findings left to the summary: off-diff or over the cap
    body: str


def _hunk_of(changed: ChangedFile, line: int) -> Hunk | None:
    return next(
        (h for h in changed.hunks if any(d.new_no == line for d in h.lines)), None
    )


def placement(finding: Finding, changed: ChangedFile | None) -> tuple[int, int] | None:
    """(start, end) head lines to comment on, all in one hunk, or None if off the diff."""
    if changed is None or changed.patch_missing or finding.line is None:
        return None
    hunk = _hunk_of(changed, finding.line)
    if hunk is None:
        return None
    end = max(finding.end_line or finding.line, finding.line)
    in_hunk = {d.new_no for d in hunk.lines if d.new_no is not None}
    if all(n in in_hunk for n in range(finding.line, end + 1)):
        return finding.line, end
    return finding.line, finding.line


def comment_body(finding: Finding, exact: bool) -> str:
    parts = [f"{_ICON[finding.severity]} **{mdsafe.code(finding.rule)}**: "
             f"{mdsafe.text(finding.message)}"]
    if finding.evidence:
        parts.append("\n".join(
            f"- [{mdsafe.text(e.title)}]({e.url.replace(')', '%29')})" for e in finding.evidence
        ))
    if exact and finding.suggestion is not None:
        replacement = finding.suggestion.removesuffix("\n")
        # An empty block deletes the lines; `fenced("")` would leave a blank line.
        parts.append("```suggestion\n```" if not replacement
                     else mdsafe.fenced(replacement, "suggestion"))
    parts.append(markers.fingerprint(finding.fingerprint))
    return "\n\n".join(parts)[:BODY_LIMIT]


def rule_of(body: str) -> str | None:
    """The rule of an inline comment this module wrote, or None."""
    found = _RULE_RE.match(body)
    return found[1] if found else None


def _comment(finding: Finding, start: int, end: int) -> dict[str, Any]:
    exact = start == finding.line and end == max(finding.end_line or start, start)
    comment: dict[str, Any] = {
        "path": finding.path, "line": end, "side": "RIGHT",
        "body": comment_body(finding, exact),
    }
    if start < end:
        comment["start_line"] = start
        comment["start_side"] = "RIGHT"
    return comment


def review_body(report: Report, fingerprints: Iterable[str], placed: int, leftover: int) -> str:
    sha = f" on `{report.head_sha[:7]}`" if report.head_sha else ""
    noun = "finding" if placed == 1 else "findings"
    lines = [markers.REVIEW, f"**CI stability review**: {placed} new {noun}{sha}, inline below."]
    if leftover:
        lines.append(f"{leftover} more new finding(s) (outside the diff, or lower-confidence) "
                     "are in the summary comment.")
    lines.append(" ".join(markers.fingerprint(fp) for fp in fingerprints))
    return "\n\n".join(lines)


def review_comments(
    report: Report,
    snapshot: PullRequestSnapshot,
    already_posted: set[str],
    max_comments: int = MAX_COMMENTS,
) -> ReviewPlan:
    """Comments for findings not yet posted on the PR, worst first, capped."""
    files = {f.path: f for f in snapshot.files}
    new = [f for f in report.findings if f.fingerprint not in already_posted]
    new.sort(key=lambda f: (-int(f.severity), *f.sort_key()))
    comments: list[dict[str, Any]] = []
    placed: list[str] = []
    leftover: list[Finding] = []
    for finding in new:
        where = placement(finding, files.get(finding.path or ""))
        # Only high-confidence findings interrupt a reviewer inline.
        if (where is None or len(comments) >= max_comments
                or finding.confidence is not Confidence.HIGH):
            leftover.append(finding)
            continue
        comments.append(_comment(finding, *where))
        placed.append(finding.fingerprint)
    body = review_body(report, placed, len(placed), len(leftover)) if comments else ""
    return ReviewPlan(tuple(comments), tuple(placed), tuple(leftover), body)
