"""SARIF 2.1.0 for GitHub code scanning (`--format sarif`).

Code scanning rejects results without a location, so PR-level findings (a missing
dedup note, say) are reported as tool notifications instead of results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import bot
from bot.core.findings import Severity
from bot.core.report import Report
from bot.core.rule import Rule, doc_section

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "note"}
_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/ci-stability-bot/ci-stability-bot"


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    docs = rule.docs()
    return {
        "id": rule.id,
        "name": "".join(part.title() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": doc_section(docs, "Why it destabilizes CI") or docs},
        "help": {"text": docs, "markdown": docs},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"tags": ["ci-stability"]},
    }


def render(report: Report, rules: Sequence[Rule]) -> str:
    descriptors = [_rule_descriptor(rule) for rule in rules]
    index = {rule.id: i for i, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for finding in report.findings:
        if finding.path is None:
            notifications.append({
                "level": _LEVEL[finding.severity],
                "message": {"text": f"[{finding.rule}] {finding.message}"},
            })
            continue
        region: dict[str, Any] = {"startLine": finding.line or 1}
        if finding.end_line and finding.line and finding.end_line > finding.line:
            region["endLine"] = finding.end_line
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "level": _LEVEL[finding.severity],
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": finding.path, "uriBaseId": "%SRCROOT%"},
                "region": region,
            }}],
            "partialFingerprints": {"ciStabilityFingerprint/v1": finding.fingerprint},
        }
        if finding.rule in index:
            result["ruleIndex"] = index[finding.rule]
        results.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "ci-stability-bot",
            "version": bot.__version__,
            "informationUri": INFO_URI,
            "rules": descriptors,
        }},
        "results": results,
        "invocations": [{
            "executionSuccessful": True,
            "toolExecutionNotifications": notifications,
        }],
    }
    doc = {"$schema": _SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
