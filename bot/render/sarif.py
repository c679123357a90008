"""SARIF 2.1.0 for GitHub code scanning (`--format sarif`).

Code scanning drops results without a physical location, so a PR-level finding (a
missing dedup note, say) is placed at line 1 of the report's anchor: the first changed
CI-stability file, the change the finding is about. Alerts are keyed on
`partialFingerprints.primaryLocationLineHash`, which we derive from the finding's own
content fingerprint, so an alert survives pushes that move its line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import bot
from bot.core.findings import Finding, Severity
from bot.core.report import Report
from bot.core.rule import Rule, doc_section

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "note"}
_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/ci-stability-bot/ci-stability-bot"
HELP_URI = f"{INFO_URI}#rules"
# Code scanning shows at most this much of a rule's short and full description.
DESCRIPTION_LIMIT = 1_024
# One category for every run: alerts are tracked per category, across PRs and pushes.
AUTOMATION_ID = "ci-stability/"


def _clip(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    docs = rule.docs()
    return {
        "id": rule.id,
        "name": "".join(part.title() for part in rule.id.split("-")),
        "shortDescription": {"text": _clip(rule.summary())},
        "fullDescription": {"text": _clip(doc_section(docs, "Why it destabilizes CI") or docs)},
        "helpUri": HELP_URI,
        "help": {"text": docs, "markdown": docs},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"tags": ["ci-stability"]},
    }


def line_hash(finding: Finding) -> str:
    """`primaryLocationLineHash`: 16 hex digits and an occurrence, as code scanning writes it.

    From the content fingerprint, not the line number, so a moved line keeps its alert."""
    key = finding.fingerprint or f"{finding.rule}\0{finding.path}\0{finding.message}"
    return f"{hashlib.sha256(key.encode()).hexdigest()[:16]}:1"


def _location(path: str, finding: Finding) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": finding.line or 1}
    if finding.end_line and finding.line and finding.end_line > finding.line:
        region["endLine"] = finding.end_line
    return {"physicalLocation": {
        "artifactLocation": {"uri": path, "uriBaseId": "%SRCROOT%"},
        "region": region,
    }}


def _result(finding: Finding, path: str, index: dict[str, int]) -> dict[str, Any]:
    text = finding.message if finding.path else f"(pull request) {finding.message}"
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": _LEVEL[finding.severity],
        "message": {"text": text},
        "locations": [_location(path, finding)],
        "partialFingerprints": {
            "primaryLocationLineHash": line_hash(finding),
            "ciStabilityFingerprint/v1": finding.fingerprint,
        },
    }
    if finding.rule in index:
        result["ruleIndex"] = index[finding.rule]
    return result


def render(report: Report, rules: Sequence[Rule]) -> str:
    index = {rule.id: i for i, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for finding in report.findings:
        path = finding.path or report.anchor_path
        if path is None:  # no file changed at all: nothing to anchor to
            notifications.append({
                "level": _LEVEL[finding.severity],
                "message": {"text": f"[{finding.rule}] {finding.message}"},
            })
            continue
        results.append(_result(finding, path, index))
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "ci-stability-bot",
            "version": bot.__version__,
            "informationUri": INFO_URI,
            "rules": [_rule_descriptor(rule) for rule in rules],
        }},
        "automationDetails": {"id": AUTOMATION_ID},
        "results": results,
        "invocations": [{
            "executionSuccessful": True,
            "toolExecutionNotifications": notifications,
        }],
    }
    doc = {"$schema": _SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
