"""Authoring helpers for rules: the base class with docs and `finding()`.

`RuleContext` (re-exported here for rule modules) and the engine's `Rule` protocol
live in `bot.core.rule`.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from bot.core.findings import Confidence, Evidence, Finding, Severity
from bot.core.rule import RuleContext, doc_section
from bot.core.snapshot import ChangedFile

__all__ = ["Rule", "RuleContext"]


class Rule:
    """Base class. Subclasses set the class attributes and implement `check`.

    The subclass docstring is the rule's documentation: a one-line summary, then the
    sections *Why it destabilizes CI*, *Flags* and *Prefer* (rendered by
    `ci-stability explain`).
    """

    id: ClassVar[str]
    severity: ClassVar[Severity]
    # Rule-specific options and their defaults; the type of a default is the type
    # the config file must use.
    options: ClassVar[Mapping[str, Any]] = {}

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        raise NotImplementedError

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.docs().split("\n", 1)[0].strip()

    @classmethod
    def doc_section(cls, title: str) -> str:
        return doc_section(cls.docs(), title)

    def finding(
        self,
        message: str,
        *,
        file: ChangedFile | None = None,
        line: int | None = None,
        end_line: int | None = None,
        suggestion: str | None = None,
        key: str = "",
        severity: Severity | None = None,
        evidence: tuple[Evidence, ...] = (),
        details: tuple[tuple[str, str], ...] = (),
        confidence: Confidence = Confidence.HIGH,
    ) -> Finding:
        """Build a finding of this rule (the engine applies severity overrides later)."""
        return Finding(
            rule=self.id,
            severity=severity or self.severity,
            message=message,
            path=file.path if file is not None else None,
            line=line,
            end_line=end_line,
            suggestion=suggestion,
            evidence=evidence,
            key=key,
            details=details,
            confidence=confidence,
        )
