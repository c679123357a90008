"""GitHub Actions workflow commands (`--format github`): `::warning file=…::message`."""

from __future__ import annotations

from bot.core.findings import Severity
from bot.core.report import Report

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report) -> str:
    lines: list[str] = []
    for finding in report.findings:
        props = [f"title={_escape_property(f'ci-stability: {finding.rule}')}"]
        if finding.path is not None:
            props.insert(0, f"file={_escape_property(finding.path)}")
            if finding.line:
                props.insert(1, f"line={finding.line}")
                if finding.end_line and finding.end_line != finding.line:
                    props.insert(2, f"endLine={finding.end_line}")
        lines.append(
            f"::{_LEVEL[finding.severity]} {','.join(props)}::{_escape_data(finding.message)}"
        )
    return "".join(line + "\n" for line in lines)
