"""Human-readable terminal output (the default `--format text`).

`segments(report)` is the output as (text, style) pairs, so the CLI can colour it on a
terminal (via rich) while `render` stays plain text; the styles are names, not escape
codes, and this module does no I/O.
"""

from __future__ import annotations

from bot.core.report import Report

Segments = list[tuple[str, str]]
# Style names the CLI maps to colours (rich style strings).
STYLES = {
    "error": "bold red", "warning": "yellow", "notice": "cyan", "where": "bold",
    "rule": "magenta", "dim": "dim", "": "",
}


def _location(path: str | None, line: int | None) -> str:
    if path is None:
        return "(pull request)"
    return f"{path}:{line}" if line else path


def segments(report: Report) -> Segments:
    out: Segments = []

    def line(*parts: tuple[str, str]) -> None:
        out.extend(parts)
        out.append(("\n", ""))

    if not report.in_scope:
        line(("No CI-stability surfaces changed: nothing to review.", ""))
    for finding in report.findings:
        severity = str(finding.severity)
        line((_location(finding.path, finding.line), "where"), (": ", ""), (severity, severity),
             (" ", ""), (f"[{finding.rule}]", "rule"), (f" {finding.message}", ""))
        if finding.suggestion is not None:
            for text in finding.suggestion.splitlines() or [""]:
                line((f"    | {text}", "dim"))
    for error in report.errors:
        line((_location(error.path, None), "where"), (f": could not fully read: {error.message}",
                                                      ""))
    for item in report.suppressed:
        who = f" by {item.by}" if item.by else ""
        line((_location(item.finding.path, item.finding.line), "where"),
             (f": suppressed ({item.source}{who}) ", "dim"),
             (f"[{item.finding.rule}]", "rule"), (f" {item.reason or '(no reason)'}", "dim"))
    for title, body in report.sections:
        line((f"\n{title}\n{body}", ""))
    counts = ", ".join(
        f"{n} {label}{'' if n == 1 else 's'}" for n, label in (
            (sum(1 for f in report.findings if str(f.severity) == s), s)
            for s in ("error", "warning", "notice")
        ) if n
    ) or "no findings"
    line((f"{counts}; {report.files_in_scope}/{report.files_total} files in scope; "
          f"conclusion: {report.conclusion}", "dim"))
    return out


def render(report: Report) -> str:
    return "".join(text for text, _style in segments(report))
