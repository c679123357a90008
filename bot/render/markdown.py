"""The PR summary (`--format markdown`; the App's summary comment and check summary)."""

from __future__ import annotations

import bot
from bot.core.findings import Confidence, Finding, Severity
from bot.core.report import Report
from bot.render import markers, mdsafe

COMMENT_LIMIT = 60_000  # GitHub refuses comment bodies over 65,536 characters
_ICON = {Severity.ERROR: "❌ error", Severity.WARNING: "⚠️ warning", Severity.NOTICE: "ℹ️ notice"}


def headline(report: Report) -> str:
    if not report.in_scope:
        return "No CI-stability surfaces changed"
    parts = [
        f"{n} {label}{'s' if n != 1 else ''}"
        for n, label in (
            (report.count(Severity.ERROR), "error"),
            (report.count(Severity.WARNING), "warning"),
            (report.count(Severity.NOTICE), "notice"),
        )
        if n
    ]
    return ", ".join(parts) if parts else "no findings"


def where(finding: Finding) -> str:
    if finding.path is None:
        return "pull request"
    suffix = f":{finding.line}" if finding.line else ""
    return mdsafe.code(f"{finding.path}{suffix}")


MIN_CELL = 120  # a trimmed message still says what is wrong


def _row(finding: Finding, cap: int | None = None) -> str:
    message = finding.message
    if cap is not None and len(message) > cap:
        message = message[: cap - 1].rstrip() + "…"
    return (
        f"| {_ICON[finding.severity]} | {mdsafe.code(finding.rule)} | {where(finding)} | "
        f"{mdsafe.cell(message)} |"
    )


def _rows(findings: tuple[Finding, ...], budget: int) -> list[str]:
    """One row per finding, messages trimmed so that as many rows as possible fit."""
    rows = [_row(f) for f in findings]
    if sum(len(r) + 1 for r in rows) <= budget or not rows:
        return rows
    # Trim the longest messages first: the same cap for all, as generous as fits.
    frame = sum(len(_row(f, 1)) + 1 for f in findings)
    cap = max(MIN_CELL, (budget - frame) // len(findings))
    return [_row(f, cap) for f in findings]


# How a maintainer reports a wrong finding (bot/app/command_handler.py and
# bot/github/reactions.py record it): one line, and only under findings.
MISFIRE_HINT = ("<sub>Wrong finding? Comment `/stability misfire <rule>` or 👎 its inline "
                "comment.</sub>")


def _footer(report: Report) -> str:
    sha = f" · head {report.head_sha[:7]}" if report.head_sha else ""
    hint = f"{MISFIRE_HINT}\n" if report.findings else ""
    return (
        f"{hint}<sub>ci-stability-bot {bot.__version__}{sha} · conclusion: {report.conclusion} · "
        "comment `/stability help` for commands</sub>"
    )


def render(report: Report, limit: int = COMMENT_LIMIT, marker: bool = True) -> str:
    """The summary within `limit` characters: long messages are trimmed before any row goes."""
    head = [markers.SUMMARY] if marker else []
    head.append(f"### CI stability review: {headline(report)}")
    tail: list[str] = []
    if report.suppressed:
        tail.append(f"<details><summary>Suppressed ({len(report.suppressed)})</summary>\n")
        for item in report.suppressed:
            by = f" by {mdsafe.text(item.by)}" if item.by else ""
            tail.append(
                f"- {mdsafe.code(item.finding.rule)} at {where(item.finding)} "
                f"({item.source}{by}): {mdsafe.text(item.reason or '(no reason)')}"
            )
        tail.append("\n</details>")
    if report.errors:
        tail.append(f"<details><summary>Could not fully read ({len(report.errors)})</summary>\n")
        tail.extend(
            f"- {mdsafe.code(e.path or 'input')}: {mdsafe.text(e.message)}" for e in report.errors
        )
        tail.append("\n</details>")
    for title, body in report.sections:
        tail.append(f"#### {mdsafe.text(title)}\n\n{body}")
    tail.append(_footer(report))

    sure = tuple(f for f in report.findings if f.confidence is Confidence.HIGH)
    unsure = tuple(f for f in report.findings if f.confidence is not Confidence.HIGH)
    table_head = ["", "| | Rule | Where | Finding |", "|---|---|---|---|"]
    # Lower-confidence findings never become inline comments; here they are collapsed.
    unsure_head = ["", f"<details><summary>Lower-confidence findings ({len(unsure)})</summary>",
                   *table_head] if unsure else []
    unsure_tail = ["", "</details>"] if unsure else []
    fixed = len("\n".join(head + table_head + unsure_head + unsure_tail + tail)) + 200
    budget = [limit - fixed]
    share = budget[0] if not unsure else budget[0] * len(sure) // len(report.findings)
    kept = _fit(_rows(sure, share), budget)
    kept_unsure = _fit(_rows(unsure, budget[0]), budget)
    dropped = len(report.findings) - len(kept) - len(kept_unsure)
    lines = head + (table_head + kept if sure else [])
    lines += (unsure_head + kept_unsure + unsure_tail) if unsure else []
    if dropped:
        lines.append(f"\n… and {dropped} more findings not shown here (the summary has a size "
                     "limit); `ci-stability review --format json` lists every one.")
    return "\n".join([*lines, "", *tail])[:limit]


def _fit(rows: list[str], budget: list[int]) -> list[str]:
    """The rows that fit in what is left of `budget[0]` (shared across tables)."""
    kept: list[str] = []
    for row in rows:
        if budget[0] - len(row) - 1 < 0:
            continue  # a row too long for what is left must not hide shorter later ones
        kept.append(row)
        budget[0] -= len(row) + 1
    return kept
