"""PLACEHOLDER: being written."""

from __future__ import annotations

from collections.abc import Iterable

from bot.findings import Finding, Severity
from rules.base import Rule, RuleContext


class RuntimeDownload(Rule):
    """PLACEHOLDER."""

    id = "runtime-download"
    severity = Severity.NOTICE

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        return ()
