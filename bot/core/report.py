"""The result of one review, and the check conclusion derived from it."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.findings import Finding, Severity
from bot.core.globs import glob_match


@dataclass(frozen=True)
class Suppressed:
    finding: Finding
    reason: str
    # Where the suppression came from: "inline", "config" or "waiver".
    source: str
    by: str | None = None


@dataclass(frozen=True)
class FileError:
    path: str | None
    message: str


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    suppressed: tuple[Suppressed, ...] = ()
    errors: tuple[FileError, ...] = ()
    in_scope: bool = True
    fail_on: Severity | None = Severity.ERROR
    files_total: int = 0
    files_in_scope: int = 0
    rules_run: tuple[str, ...] = ()
    repo: str | None = None
    number: int | None = None
    title: str = ""
    head_sha: str | None = None
    # The first changed CI-stability file: where formats that need a file for every
    # result (SARIF for code scanning, rdjson) place PR-level findings.
    anchor_path: str | None = None
    # Free-form sections later stages attach (prior failing runs, waivers).
    sections: tuple[tuple[str, str], ...] = field(default=())
    # Sections only the check run shows (the advisor's token use, or why it is absent).
    check_sections: tuple[tuple[str, str], ...] = field(default=())

    @property
    def conclusion(self) -> str:
        """Check-run conclusion: failure at/above `fail_on`, neutral on warnings, else success.

        A PR that touches no surface is `skipped`, GitHub's convention for "not applicable"
        (a required check counts it as passing).
        """
        if not self.in_scope:
            return "skipped"
        worst = max((f.severity for f in self.findings), default=None)
        if worst is None:
            return "success"
        if self.fail_on is not None and worst >= self.fail_on:
            return "failure"
        if worst >= Severity.WARNING:
            return "neutral"
        return "success"

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)


@dataclass(frozen=True)
class Waiver:
    """A maintainer's `/stability ignore` decision, recorded by the App."""

    rule: str
    path: str | None
    reason: str
    by: str
    at: str  # ISO timestamp, supplied by the caller (the engine has no clock)

    def covers(self, finding: Finding) -> bool:
        if finding.rule != self.rule:
            return False
        return self.path is None or (
            finding.path is not None and glob_match(self.path, finding.path)
        )
