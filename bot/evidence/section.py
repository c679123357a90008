"""The "Prior failing runs" section, its evidence links, and the `/stability runs` reply (pure).

Root-cause lines and job names come from CI logs and webhook payloads: hostile text.
Everything goes through `bot.render.mdsafe`; URLs must be http(s) and are
percent-encoded where Markdown would end them.
"""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import datetime
from urllib.parse import quote, urlsplit

from bot.core.findings import Evidence
from bot.core.report import Report
from bot.evidence.needles import NeedleKind
from bot.evidence.records import JobRecord
from bot.evidence.relevance import Classification, Match, RelatedFailure, Relevance, format_age
from bot.evidence.similar import NOTHING, Similar, SimilarLine
from bot.render import mdsafe

SECTION_TITLE = "Prior failing runs"
SIMILAR_SUMMARY = "Similar failures elsewhere"
HEADING = f"### {SECTION_TITLE}"
FAILING_RUN_RULE = "failing-run-link"
DEFAULT_BUDGET = 12_000
LINE_CHARS = 180
EVIDENCE_LIMIT = 5
# What a reader recognises first: the job or config name, then files, then paths.
_DISPLAY_ORDER = (
    NeedleKind.JOB_LABEL, NeedleKind.WORKFLOW_NAME, NeedleKind.CONFIG_STEM,
    NeedleKind.WORKFLOW_FILE, NeedleKind.FILE_NAME, NeedleKind.PATH,
)
_HEADER = (
    "| Job | When | Classification | Root cause | Surface symptom it hid | Related through |\n"
    "| --- | --- | --- | --- | --- | --- |"
)


def safe_url(url: str | None) -> str | None:
    """`url` fit for a Markdown link target, or None when it is not plain http(s)."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        return None
    return quote(url.strip(), safe=":/?#[]@!$&'*+,;=%~-._")


def _clip(text: str, limit: int = LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _code(text: str | None) -> str:
    if not text:
        return "—"
    # Inside a table a pipe ends the cell, even within a code span, unless escaped.
    return mdsafe.code(_clip(text)).replace("|", "\\|")


def run_label(job: JobRecord) -> str:
    """Where the job ran, e.g. `Buildkite ci #81913` or `Actions CI run 123 (attempt 2)`."""
    if job.provider == "buildkite":
        where = f"Buildkite {job.pipeline}"
        run = f" #{job.run_id}" if job.run_id else ""
    else:
        where = f"Actions {job.pipeline}"
        run = f" run {job.run_id}" if job.run_id else ""
    attempt = f" (attempt {job.attempt})" if job.attempt > 1 else ""
    return f"{where}{run}{attempt}"


def _link(text: str, url: str | None) -> str:
    target = safe_url(url)
    label = mdsafe.cell(text).replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({target})" if target else label


def _when(job: JobRecord, now: datetime) -> str:
    moment = job.finished_at or job.started_at
    if moment is None:
        return "—"
    return f"{moment:%Y-%m-%d %H:%M} UTC ({format_age(now - moment)} ago)"


def _seen(related: RelatedFailure) -> str:
    if related.occurrences <= 1 or related.first_seen is None or related.last_seen is None:
        return ""
    return (f"; {related.occurrences}× between {related.first_seen:%m-%d} "
            f"and {related.last_seen:%m-%d}")


def _classification(related: RelatedFailure, base_branch: str) -> str:
    kind = related.classification
    text = f"**{kind}**"
    if kind is Classification.BROKEN_TRUNK:
        text += f" ({related.base_failures}× on `{mdsafe.cell(base_branch)}`)"
    elif kind is Classification.FLAKY and related.passed_on_same_commit is not None:
        passed = related.passed_on_same_commit
        text += " — " + _link("passed on the same commit", passed.url or passed.run_url)
    elif kind is Classification.RECURRING and related.other_prs:
        shown = ", ".join(f"#{n}" for n in related.other_prs[:5])
        more = f" +{len(related.other_prs) - 5}" if len(related.other_prs) > 5 else ""
        text += f" (also on {shown}{more})"
    return text + _seen(related)


def _root_cause(job: JobRecord) -> str:
    if job.line:
        cell = f"{mdsafe.cell(job.category or 'other')}: {_code(job.line)}"
        if job.chain and "←" in job.chain:
            cell += f"<br>{mdsafe.cell(_clip(job.chain))}"
        if job.log_note:
            cell += f"<br>_{mdsafe.cell(_clip(job.log_note))}_"
        return cell
    return mdsafe.cell(_clip(job.log_note or "no root cause extracted"))


def _through(matches: tuple[Match, ...]) -> str:
    """The PR's needles that matched, most specific first, and where in the job."""
    wheres: dict[str, list[str]] = {}
    for match in sorted(matches, key=lambda m: _DISPLAY_ORDER.index(m.needle.kind)):
        places = wheres.setdefault(match.needle.text, [])
        if match.where not in places:
            places.append(match.where)
    parts = [f"{_code(text)} in {mdsafe.cell(', '.join(places))}"
             for text, places in list(wheres.items())[:2]]
    more = f" (+{len(wheres) - 2})" if len(wheres) > 2 else ""
    return "; ".join(parts) + more


def _row(related: RelatedFailure, relevance: Relevance) -> str:
    job = related.job
    title = f"{job.job_name} · {run_label(job)}"
    cells = [
        _link(title, job.url or job.run_url),
        _when(job, relevance.now),
        _classification(related, relevance.base_branch),
        _root_cause(job),
        _code(job.surface),
        _through(related.matches),
    ]
    return "| " + " | ".join(cells) + " |"


def _table(relevance: Relevance, budget: int, used: int) -> tuple[list[str], int]:
    rows: list[str] = []
    for related in relevance.related:
        row = _row(related, relevance)
        if used + len(row) + 1 > budget and rows:
            break
        rows.append(row)
        used += len(row) + 1
    return rows, len(relevance.related) - len(rows) + relevance.omitted


def _similar_line(line: SimilarLine, now: datetime) -> str:
    job = line.job
    on = f"#{job.pr_number}" if job.pr_number is not None else (
        mdsafe.code(_clip(job.branch, 60)) if job.branch else "")
    count = f", {line.occurrences}×" if line.occurrences > 1 else ""
    like = mdsafe.cell(_clip(line.like.job_name, 80)).replace("*", "\\*")  # stays bold
    if job.line:
        cause = f"{mdsafe.text(job.category or 'other')}: {mdsafe.code(_clip(job.line, 120))}"
    else:
        cause = mdsafe.text(_clip(job.signature or "no root cause extracted"))
    return (f"- {_link(f'{job.job_name} · {run_label(job)}', job.url or job.run_url)} — "
            f"{_when(job, now)}{' on ' + on if on else ''}{count}; {line.similarity:.0%} "
            f"like **{like}**: {cause}")


def similar_block(similar: Similar, now: datetime) -> str:
    """The collapsed list of similar failures elsewhere; empty when there is none."""
    if not similar.lines:
        return ""
    items = "\n".join(_similar_line(line, now) for line in similar.lines)
    more = f"\n\n…and {similar.omitted} more." if similar.omitted else ""
    return (
        f"<details><summary>{SIMILAR_SUMMARY} ({len(similar.lines) + similar.omitted})"
        "</summary>\n\nFailures of other jobs or branches in the same window whose root cause "
        "resembles one above (trigram similarity of the signatures).\n\n"
        f"{items}{more}\n\n</details>\n"
    )


def section_body(relevance: Relevance, similar: Similar = NOTHING, *,
                 budget: int = DEFAULT_BUDGET) -> str | None:
    """The section without its heading (for `Report.sections`); None when nothing relates."""
    if not relevance.related:
        return None
    intro = (
        "Recent CI failures whose job, log or test ids mention the files this pull request "
        f"changes ({mdsafe.text(relevance.freshness())}).\n\n{_HEADER}"
    )
    block = similar_block(similar, relevance.now)
    rows, left = _table(relevance, budget - 200 - len(block), len(intro) + len(HEADING))
    tail = ""
    if left:
        tail = f"\n\n…and {left} more; `ci-stability runs search --file PATH` lists them all."
    # The trailing blank line ends the table: whatever follows must not become a row.
    return intro + "\n" + "\n".join(rows) + tail + "\n" + (f"\n{block}" if block else "")


def render_section(relevance: Relevance, similar: Similar = NOTHING, *,
                   budget: int = DEFAULT_BUDGET) -> str | None:
    """The Markdown section with its heading; None when nothing relates."""
    body = section_body(relevance, similar, budget=budget)
    return None if body is None else f"{HEADING}\n\n{body}"


def attach(report: Report, relevance: Relevance, similar: Similar = NOTHING, *,
           budget: int = DEFAULT_BUDGET) -> Report:
    """`report` with the section added and `failing-run-link` findings given the run links."""
    body = section_body(relevance, similar, budget=budget)
    if body is None:
        return report
    links = evidence_items(relevance)
    findings = tuple(
        dataclasses.replace(f, evidence=f.evidence or links)
        if f.rule == FAILING_RUN_RULE else f
        for f in report.findings
    )
    return dataclasses.replace(report, findings=findings,
                               sections=(*report.sections, (SECTION_TITLE, body)))


def digest(relevance: Relevance) -> str:
    """Changes when the evidence would (new runs, new classes), for `extra_digest`."""
    parts = sorted(f"{r.job.provider}:{r.job.job_id}:{r.classification}:{r.occurrences}"
                   for r in relevance.related)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def runs_reply(relevance: Relevance, similar: Similar = NOTHING, *,
               budget: int = DEFAULT_BUDGET) -> str:
    """The answer to `/stability runs`: the same table, or why there is none."""
    section = render_section(relevance, similar, budget=budget)
    if section is not None:
        return section
    files = len({n.path for n in relevance.needles})
    return (
        f"{HEADING}\n\nNo indexed CI failure mentions the {files} changed file(s) "
        f"({mdsafe.text(relevance.freshness())})."
    )


def evidence_items(relevance: Relevance, *, limit: int = EVIDENCE_LIMIT) -> tuple[Evidence, ...]:
    """Links for `failing-run-link` findings: the runs the author could cite."""
    items: list[Evidence] = []
    for related in relevance.related:
        job = related.job
        url = safe_url(job.url or job.run_url)
        if url is None:
            continue
        moment = job.finished_at or job.started_at
        when = f", {moment:%Y-%m-%d}" if moment else ""
        cause = f", {job.category}" if job.category else ""
        title = f"{job.job_name} ({run_label(job)}{when}{cause}; {related.classification})"
        items.append(Evidence(title=title, url=url))
        if len(items) >= limit:
            break
    return tuple(items)
