"""PyTorch lintrunner's adapter protocol (`--format lintrunner`): one LintMessage per line.

lintrunner's `original`/`replacement` are whole-file texts, which a report does not
carry, so a suggested replacement goes into the description instead; `code` is the
linter's code and `name` the rule id, as lintrunner shows them (`CISTABILITY/rule`).
"""

from __future__ import annotations

import json
from typing import Any

from bot.core.findings import Finding, Severity
from bot.core.report import Report

CODE = "CISTABILITY"
_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "advice"}


def message(finding: Finding) -> dict[str, Any]:
    description = finding.message
    if finding.suggestion is not None:
        description += "\n\nSuggested replacement:\n" + finding.suggestion
    return {
        "path": finding.path,
        "line": finding.line,
        "char": None,
        "code": CODE,
        "severity": _SEVERITY[finding.severity],
        "name": finding.rule,
        "original": None,
        "replacement": None,
        "description": description,
    }


def render(report: Report) -> str:
    return "".join(json.dumps(message(f), ensure_ascii=False) + "\n" for f in report.findings)
