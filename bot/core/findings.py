"""Findings: what a rule reports, and how severities order."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class Severity(IntEnum):
    NOTICE = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str) -> Severity:
        try:
            return cls[value.strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown severity {value!r} (expected error, warning or notice)"
            ) from None


class Confidence(IntEnum):
    """How sure a rule is. Only high-confidence findings become inline review comments;
    medium ones go to the summary (collapsed) and the check run."""

    MEDIUM = 1
    HIGH = 2

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str) -> Confidence:
        try:
            return cls[value.strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown confidence {value!r} (expected high or medium)"
            ) from None


@dataclass(frozen=True)
class Evidence:
    """A link that backs a finding (a failing CI run, an issue)."""

    title: str
    url: str


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    # Replacement for lines line..end_line (rendered as a ```suggestion block).
    suggestion: str | None = None
    evidence: tuple[Evidence, ...] = ()
    # What identifies this finding across pushes, independent of line numbers:
    # rules pass the normalized content they judged; the engine hashes it.
    key: str = ""
    fingerprint: str = ""
    # The old → new values a finding is about, for renderers that tabulate them.
    details: tuple[tuple[str, str], ...] = field(default=())
    confidence: Confidence = Confidence.HIGH

    @property
    def is_pr_level(self) -> bool:
        return self.path is None

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path or "", self.line or 0, -int(self.severity), self.rule)
