"""Renderers: pure functions from a Report (and the rule registry) to text.

The output format is chosen once, here: `render(report, fmt, rules)`. Only the chosen
format's module is imported: a one-shot `review --format json` does not pay for the
Markdown, SARIF and other renderers it never calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.report import Report
from bot.core.rule import Rule

FORMATS = ("text", "json", "markdown", "sarif", "github", "rdjson", "lintrunner")


def render(report: Report, fmt: str, rules: Sequence[Rule]) -> str:
    """`report` in output format `fmt` (one of FORMATS); `rules` document SARIF's rules."""
    # Deliberately lazy (start-up time), each import below: one format per process.
    if fmt == "json":
        from bot.render import jsonout

        return jsonout.render(report)
    if fmt == "markdown":
        from bot.render import markdown  # Deliberately lazy (start-up time)

        return markdown.render(report)
    if fmt == "sarif":
        from bot.render import sarif  # Deliberately lazy (start-up time)

        return sarif.render(report, rules)
    if fmt == "github":
        from bot.render import workflow_commands  # Deliberately lazy (start-up time)

        return workflow_commands.render(report)
    if fmt == "rdjson":
        from bot.render import rdjson  # Deliberately lazy (start-up time)

        return rdjson.render(report)
    if fmt == "lintrunner":
        from bot.render import lintrunner  # Deliberately lazy (start-up time)

        return lintrunner.render(report)
    if fmt == "text":
        from bot.render import text  # Deliberately lazy (start-up time)

        return text.render(report)
    raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
