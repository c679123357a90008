"""PLACEHOLDER: being written."""

from __future__ import annotations

from collections.abc import Iterable

from bot.findings import Finding, Severity
from rules.base import Rule, RuleContext


class AllocatorScope(Rule):
    """PLACEHOLDER."""

    id = "allocator-scope"
    severity = Severity.WARNING

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        return ()
