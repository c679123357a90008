"""The inline review: comments on diff lines only, suggestions where exact. Pure."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.findings import Confidence, Finding, Severity
from bot.core.report import Report
from bot.core.snapshot import ChangedFile, Hunk, PullRequestSnapshot
from bot.render import markers, mdsafe

MAX_COMMENTS = 30  # GitHub documents no limit, but large reviews get refused as spam
# Inline comments per kind of finding (one rule, one message template): a coordinated
# edit (gates re-baselined in 8 configs) reads as one change, not 18 interruptions.
PER_KIND = 3
_LISTED = 40  # places named in one collapsed line
_COLLAPSED_CHARS = 20_000  # of collapsed lines in one body (the markers must fit after)
BODY_LIMIT = 60_000
_ICON = {Severity.ERROR: "❌", Severity.WARNING: "⚠️", Severity.NOTICE: "ℹ️"}
# The rule named at the head of an inline comment (`comment_body`), read back for a 👎.
_RULE_RE = re.compile(r"\A\S+ \*\*`([A-Za-z0-9][A-Za-z0-9_.:-]*)`\*\*: ")
# What varies between findings of one kind: the names in code spans and the values (a
# number standing alone; `step-12` outside a code span names another thing).
_VARIES_RE = re.compile(r"`[^`\n]*`|(?<![\w.-])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w-])")


@dataclass(frozen=True)
class ReviewPlan:
    comments: tuple[dict[str, Any], ...]
    fingerprints: tuple[str, ...]  # findings this review posts: inline or collapsed
    leftover: tuple[Finding, ...]  # new findings left to the summary: off-diff or over the cap
    body: str
    # Findings of a kind already commented on PER_KIND times: one line of the body.
    collapsed: tuple[Finding, ...] = ()


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


def kind_of(finding: Finding) -> tuple[str, str]:
    """The rule and message template of a finding: its kind of change."""
    return finding.rule, _VARIES_RE.sub("#", finding.message)


def _elide(match: re.Match[str]) -> str:
    return "`…`" if match[0].startswith("`") else "…"


def _place(finding: Finding) -> str:
    where = f"{finding.path}:{finding.line}" if finding.line else finding.path or ""
    values = finding.details[0][1] if finding.details else ""
    return mdsafe.code(where) + (f" ({mdsafe.text(values)})" if values else "")


def collapsed_lines(findings: Sequence[Finding]) -> list[str]:
    """One line per kind: the places of its findings not commented inline."""
    kinds: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        kinds.setdefault(kind_of(finding), []).append(finding)
    lines: list[str] = []
    budget = _COLLAPSED_CHARS
    for (rule, _), group in kinds.items():
        # The kind in the words of its first finding, what varies elided.
        head = _VARIES_RE.sub(_elide, group[0].message.split(": ", 1)[0])
        places = ", ".join(_place(f) for f in group[:_LISTED])
        more = f" and {len(group) - _LISTED} more" if len(group) > _LISTED else ""
        line = (f"{_ICON[group[0].severity]} {mdsafe.code(rule)}: {len(group)} more like "
                f"the inline comments (“{mdsafe.text(head)}”), not commented inline: "
                f"{places}{more}.")
        budget -= len(line)
        if budget < 0:
            lines.append("… and more of other kinds: all are in the summary comment.")
            break
        lines.append(line)
    return lines


def review_body(report: Report, fingerprints: Iterable[str], placed: int, leftover: int,
                collapsed: Sequence[Finding] = ()) -> str:
    sha = f" on `{report.head_sha[:7]}`" if report.head_sha else ""
    noun = "finding" if placed == 1 else "findings"
    lines = [markers.REVIEW, f"**CI stability review**: {placed} new {noun}{sha}, inline below."]
    lines += collapsed_lines(collapsed)
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
    """Comments for findings not yet posted on the PR, worst first, capped; beyond
    PER_KIND comments of one kind (counting those posted before), one body line."""
    files = {f.path: f for f in snapshot.files}
    new = [f for f in report.findings if f.fingerprint not in already_posted]
    new.sort(key=lambda f: (-int(f.severity), *f.sort_key()))
    inline = Counter(kind_of(f) for f in report.findings if f.fingerprint in already_posted)
    comments: list[dict[str, Any]] = []
    placed: list[str] = []
    leftover: list[Finding] = []
    collapsed: list[Finding] = []
    for finding in new:
        where = placement(finding, files.get(finding.path or ""))
        # Only high-confidence findings interrupt a reviewer inline.
        if where is None or finding.confidence is not Confidence.HIGH:
            leftover.append(finding)
            continue
        kind = kind_of(finding)
        if inline[kind] >= PER_KIND:
            collapsed.append(finding)
            continue
        if len(comments) >= max_comments:
            leftover.append(finding)
            continue
        inline[kind] += 1
        comments.append(_comment(finding, *where))
        placed.append(finding.fingerprint)
    if not comments:
        return ReviewPlan((), (), (*leftover, *collapsed), "")
    posted = (*placed, *(f.fingerprint for f in collapsed))
    body = review_body(report, posted, len(placed), len(leftover), collapsed)
    return ReviewPlan(tuple(comments), posted, tuple(leftover), body, tuple(collapsed))
