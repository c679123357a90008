"""PLACEHOLDER: being written."""

from __future__ import annotations

from collections.abc import Iterable

from bot.findings import Finding, Severity
from rules.base import Rule, RuleContext


class BlockScalarComment(Rule):
    """PLACEHOLDER."""

    id = "block-scalar-comment"
    severity = Severity.ERROR

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        return ()
