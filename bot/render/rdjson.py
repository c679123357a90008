"""reviewdog's Diagnostic Format (`--format rdjson`), for `reviewdog -f=rdjson`.

One DiagnosticResult document. Ranges are line-wise (no columns), which reviewdog
reads as "these whole lines", so a suggestion replaces exactly the flagged lines.
PR-level findings sit at line 1 of the report's anchor file, as in SARIF: reviewdog
drops diagnostics without a path.
"""

from __future__ import annotations

import json
from typing import Any

from bot.core.findings import Finding, Severity
from bot.core.report import Report
from bot.render.sarif import HELP_URI, INFO_URI

_SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.NOTICE: "INFO"}
SOURCE = {"name": "ci-stability", "url": INFO_URI}


def _range(finding: Finding) -> dict[str, Any]:
    start = finding.line or 1
    end = max(finding.end_line or start, start)
    return {"start": {"line": start}, "end": {"line": end}}


def diagnostic(finding: Finding, anchor: str | None) -> dict[str, Any] | None:
    path = finding.path or anchor
    if path is None:
        return None
    message = finding.message if finding.path else f"(pull request) {finding.message}"
    item: dict[str, Any] = {
        "message": message,
        "location": {"path": path, "range": _range(finding)},
        "severity": _SEVERITY[finding.severity],
        "source": SOURCE,
        "code": {"value": finding.rule, "url": HELP_URI},
    }
    if finding.suggestion is not None and finding.path and finding.line:
        text = finding.suggestion[:-1] if finding.suggestion.endswith("\n") else finding.suggestion
        item["suggestions"] = [{"range": _range(finding), "text": text}]
    return item


def render(report: Report) -> str:
    diagnostics = [d for d in (diagnostic(f, report.anchor_path) for f in report.findings) if d]
    worst = report.worst()
    doc: dict[str, Any] = {"source": SOURCE, "diagnostics": diagnostics}
    if worst is not None:
        doc["severity"] = _SEVERITY[worst]
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
