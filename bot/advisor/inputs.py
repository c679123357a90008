"""What the advisor may read, as blocks of redacted, clipped lines (pure).

Four kinds of block: the prior failing runs (root-cause line, surface symptom and the
log lines around them, from the failure index), the changed hunks, the findings, and
the pull request's title and description; for a dedup draft, the other pull requests.
Each is hostile text: every line is clipped and passes through `redact` here, so
nothing later can forget to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.advisor.redact import redact, redact_lines
from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.duplicates import DuplicateReport
from bot.evidence.relevance import RelatedFailure

LINE_CHARS = 400  # longer lines are clipped before redaction (bounded regex work too)
BODY_LINES = 80
KINDS = ("runs", "findings", "hunks", "description", "pull requests")


@dataclass(frozen=True)
class Block:
    kind: str  # one of KINDS
    title: str
    lines: tuple[str, ...]
    url: str | None = None  # a CI run or PR link, which the answer may cite

    def text(self) -> str:
        return "\n".join([f"## {self.title}", *self.lines])


def _clip(line: str) -> str:
    line = line.replace("\r", "").replace("\t", "    ")
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def clean(line: str) -> str:
    return redact(_clip(line))


def _clean_all(lines: Sequence[str]) -> tuple[str, ...]:
    return tuple(redact_lines(_clip(line) for line in lines))


def run_blocks(related: Sequence[RelatedFailure]) -> list[Block]:
    """One block per related failure, most relevant first (relevance's own order)."""
    blocks = []
    for item in related:
        job = item.job
        when = job.finished_at or job.started_at
        head = [
            f"job: {job.job_name} ({job.pipeline}, {job.provider})",
            f"classification: {item.classification}; seen {item.occurrences} time(s)"
            + (f", last {when:%Y-%m-%d}" if when else ""),
        ]
        if job.category:
            head.append(f"category: {job.category}")
        if job.line:
            head.append(f"root-cause line: {job.line}")
        if job.log_note:
            head.append(f"note: {job.log_note}")
        lines = [*head, "log context:", *job.context] if job.context else head
        blocks.append(Block("runs", f"failing run {job.job_name}", _clean_all(lines),
                            job.url or job.run_url))
    return blocks


def hunk_blocks(snapshot: PullRequestSnapshot) -> list[Block]:
    blocks = []
    for changed in snapshot.files:
        for hunk in changed.hunks:
            lines = [f"{line.kind.value}{line.text}" for line in hunk.lines]
            title = (f"{changed.path} @@ -{hunk.old_start},{hunk.old_count} "
                     f"+{hunk.new_start},{hunk.new_count} @@")
            blocks.append(Block("hunks", clean(title), _clean_all(lines)))
    return blocks


def finding_blocks(report: Report) -> list[Block]:
    blocks = []
    for finding in report.findings:
        where = f"{finding.path}:{finding.line}" if finding.path else "pull request"
        blocks.append(Block("findings", clean(f"{finding.rule} ({finding.severity}) at {where}"),
                            _clean_all(finding.message.splitlines())))
    return blocks


def description_block(snapshot: PullRequestSnapshot) -> Block:
    body = (snapshot.body or "").splitlines()
    clipped = body[:BODY_LINES]
    if len(body) > BODY_LINES:
        clipped.append(f"[… {len(body) - BODY_LINES} more lines not shown]")
    return Block("description", clean(f"pull request title: {snapshot.title}"),
                 _clean_all(clipped))


def duplicate_blocks(duplicates: DuplicateReport) -> list[Block]:
    blocks = []
    for item in duplicates.items:
        when = f" {item.when:%Y-%m-%d}" if item.when else ""
        lines = [f"state: {item.state}{when}"]
        if item.shared_files:
            lines.append("changes the same files: " + ", ".join(item.shared_files[:10]))
        if item.shared_terms:
            lines.append("names the same job/config/test: " + ", ".join(item.shared_terms[:5]))
        blocks.append(Block("pull requests", clean(f"#{item.number} {item.title}"),
                            _clean_all(lines), item.url or None))
    return blocks
