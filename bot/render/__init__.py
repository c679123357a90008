"""Renderers: pure functions from a Report (and the rule registry) to text.

The output format is chosen once, here: `render(report, fmt, rules)`.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.report import Report
from bot.core.rule import Rule
from bot.render import jsonout, lintrunner, markdown, rdjson, sarif, text, workflow_commands

FORMATS = ("text", "json", "markdown", "sarif", "github", "rdjson", "lintrunner")


def render(report: Report, fmt: str, rules: Sequence[Rule]) -> str:
    """`report` in output format `fmt` (one of FORMATS); `rules` document SARIF's rules."""
    if fmt == "json":
        return jsonout.render(report)
    if fmt == "markdown":
        return markdown.render(report)
    if fmt == "sarif":
        return sarif.render(report, rules)
    if fmt == "github":
        return workflow_commands.render(report)
    if fmt == "rdjson":
        return rdjson.render(report)
    if fmt == "lintrunner":
        return lintrunner.render(report)
    if fmt == "text":
        return text.render(report)
    raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
