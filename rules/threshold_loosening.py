"""PLACEHOLDER: being written."""

from __future__ import annotations

from collections.abc import Iterable

from bot.findings import Finding, Severity
from rules.base import Rule, RuleContext


class ThresholdLoosening(Rule):
    """PLACEHOLDER."""

    id = "threshold-loosening"
    severity = Severity.WARNING

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        return ()
