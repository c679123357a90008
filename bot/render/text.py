"""Human-readable terminal output (the default `--format text`)."""

from __future__ import annotations

from bot.core.report import Report


def _location(path: str | None, line: int | None) -> str:
    if path is None:
        return "(pull request)"
    return f"{path}:{line}" if line else path


def render(report: Report) -> str:
    out: list[str] = []
    if not report.in_scope:
        out.append("No CI-stability surfaces changed: nothing to review.")
    for finding in report.findings:
        out.append(
            f"{_location(finding.path, finding.line)}: {finding.severity} "
            f"[{finding.rule}] {finding.message}"
        )
        if finding.suggestion is not None:
            out.extend(f"    | {line}" for line in finding.suggestion.splitlines() or [""])
    for error in report.errors:
        out.append(f"{_location(error.path, None)}: could not fully read: {error.message}")
    for item in report.suppressed:
        who = f" by {item.by}" if item.by else ""
        out.append(
            f"{_location(item.finding.path, item.finding.line)}: suppressed ({item.source}{who}) "
            f"[{item.finding.rule}] {item.reason or '(no reason)'}"
        )
    for title, body in report.sections:
        out.append(f"\n{title}\n{body}")
    counts = ", ".join(
        f"{n} {label}{'' if n == 1 else 's'}" for n, label in (
            (sum(1 for f in report.findings if str(f.severity) == s), s)
            for s in ("error", "warning", "notice")
        ) if n
    ) or "no findings"
    out.append(
        f"{counts}; {report.files_in_scope}/{report.files_total} files in scope; "
        f"conclusion: {report.conclusion}"
    )
    return "\n".join(out) + "\n"
