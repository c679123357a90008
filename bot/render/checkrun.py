"""The check run's output: title, summary, annotations and buttons. Pure."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from bot.core.findings import Finding, Severity
from bot.core.report import Report, Waiver
from bot.render import markdown, mdsafe

CHECK_NAME = "CI stability review"
SUMMARY_LIMIT = 65_535  # GitHub rejects a longer output.summary
ANNOTATIONS_PER_REQUEST = 50  # GitHub's maxItems per create/update call
# GitHub documents no hard cap, but check runs with more than about 1,000 annotations
# stop rendering them reliably and every extra batch is another API call.
MAX_ANNOTATIONS = 1_000
MESSAGE_LIMIT = 4_000
RERUN_ACTION = "rerun"
# Buttons (max 3; label <= 20, identifier <= 20, description <= 40 characters).
ACTIONS: tuple[dict[str, str], ...] = (
    {"label": "Re-run review", "identifier": RERUN_ACTION,
     "description": "Review this commit again"},
)
_LEVEL = {Severity.ERROR: "failure", Severity.WARNING: "warning", Severity.NOTICE: "notice"}


def title(report: Report) -> str:
    if not report.in_scope:
        return "No CI-stability surfaces changed"
    head = markdown.headline(report)
    return "No findings" if head == "no findings" else head


def annotation(finding: Finding) -> dict[str, Any] | None:
    if finding.path is None or finding.line is None:
        return None
    end = max(finding.end_line or finding.line, finding.line)
    message = finding.message
    if finding.evidence:
        message += "\n" + "\n".join(f"{e.title}: {e.url}" for e in finding.evidence)
    return {
        "path": finding.path,
        "start_line": finding.line,
        "end_line": end,
        "annotation_level": _LEVEL[finding.severity],
        "message": message[:MESSAGE_LIMIT],
        "title": finding.rule,
    }


def waivers_markdown(waivers: Sequence[Waiver]) -> str:
    """Who waived which rule, where, why and when (for the check summary)."""
    lines = []
    for waiver in waivers:
        where = f" on {mdsafe.code(waiver.path)}" if waiver.path else ""
        lines.append(
            f"- {mdsafe.code(waiver.rule)}{where} by {mdsafe.text(waiver.by)} at "
            f"{mdsafe.text(waiver.at)}: {mdsafe.text(waiver.reason)}"
        )
    return "\n".join(lines)


def check_run_output(report: Report, waivers_text: str = "") -> dict[str, Any]:
    """`output` for checks/create or checks/update, with every annotation (batch them)."""
    if report.check_sections:
        report = dataclasses.replace(
            report, sections=(*report.sections, *report.check_sections)
        )
    if waivers_text:
        report = dataclasses.replace(
            report, sections=(*report.sections, ("Waivers", waivers_text))
        )
    annotations = [a for a in (annotation(f) for f in report.findings) if a is not None]
    if len(annotations) > MAX_ANNOTATIONS:
        report = dataclasses.replace(report, sections=(*report.sections, (
            "Annotations", f"{MAX_ANNOTATIONS:,} of {len(annotations):,} located findings are "
            f"annotated on the files; the other {len(annotations) - MAX_ANNOTATIONS:,} are "
            "left out (GitHub renders about 1,000 per check run). Every finding is in "
            "`ci-stability review --format json` (the Action's `json` output).",
        )))
    return {
        "title": title(report),
        "summary": markdown.render(report, limit=SUMMARY_LIMIT, marker=False),
        "annotations": annotations[:MAX_ANNOTATIONS],
    }


def annotation_batches(annotations: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [
        list(annotations[i : i + ANNOTATIONS_PER_REQUEST])
        for i in range(0, len(annotations), ANNOTATIONS_PER_REQUEST)
    ]
