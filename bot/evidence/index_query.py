"""The failure index's SQL helpers: column encoding, the WHERE of a job query, rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any

from bot.evidence.records import JobQuery, JobRecord, from_text, to_text

_SEP = "\n"  # joins tuple fields into one TEXT column
JOB_COLUMNS = [f.name for f in fields(JobRecord)]

def column_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return to_text(value)
    if isinstance(value, tuple):
        return _SEP.join(str(v).replace("\n", " ") for v in value)
    if isinstance(value, bool):
        return int(value)
    return value


_TEXT_COLUMNS = (
    "j.job_name", "j.step", "j.pipeline", "j.workflow_path", "j.line", "j.surface",
    "j.context", "j.mentions",
)


def _like(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _in(column: str, values: Sequence[str], where: list[str], params: list[Any]) -> None:
    where.append(f"{column} IN ({', '.join('?' for _ in values)})")
    params.extend(values)


def job_where(query: JobQuery, postgres: bool = False) -> tuple[list[str], list[Any]]:
    """The WHERE terms and their parameters. Matching is case-insensitive on both
    backends (SQLite's LIKE is, for ASCII; PostgreSQL needs ILIKE)."""
    like = "ILIKE" if postgres else "LIKE"
    where: list[str] = []
    params: list[Any] = []
    if query.repo is not None:
        where.append("LOWER(j.repo) = LOWER(?)")
        params.append(query.repo)
    if query.since is not None:
        where.append("COALESCE(j.finished_at, j.ingested_at) >= ?")
        params.append(to_text(query.since))
    if query.until is not None:
        where.append("COALESCE(j.finished_at, j.ingested_at) <= ?")
        params.append(to_text(query.until))
    for column, values in (
        ("j.conclusion", query.conclusions), ("j.job_name", query.job_names),
        ("j.signature", query.signatures), ("j.commit_sha", query.commits),
        ("j.category", query.categories),
    ):
        if values:
            _in(column, values, where, params)
    if query.text_any:
        alternatives = []
        for needle in query.text_any:
            for column in _TEXT_COLUMNS:
                alternatives.append(f"{column} {like} ? ESCAPE '\\'")
                params.append(_like(needle))
        where.append(f"({' OR '.join(alternatives)})")
    for column, pattern in (("j.job_name", query.job_name_like),
                            ("j.signature", query.signature_like)):
        if pattern:
            where.append(f"{column} {like} ? ESCAPE '\\'")
            params.append(_like(pattern))
    return where, params


def job_select_sql(where: Sequence[str], score: str = "") -> str:
    """The job query (newest first; run-level PR numbers fill in what jobs lack) for
    these WHERE terms, with `score` (an SQL expression) as a last column ordered first."""
    scored = f", {score} AS score" if score else ""
    return (
        f"SELECT {', '.join('j.' + c for c in JOB_COLUMNS if c != 'pr_number')}, "
        f"COALESCE(j.pr_number, r.pr_number){scored} "
        "FROM ci_jobs j LEFT JOIN ci_runs r ON r.provider = j.provider AND r.run_id = j.run_id"
        f"{' WHERE ' + ' AND '.join(where) if where else ''} "
        f"ORDER BY {'score DESC, ' if score else ''}"
        "COALESCE(j.finished_at, j.ingested_at) DESC, j.job_id LIMIT ?"
    )


def job_from_row(row: Sequence[Any]) -> JobRecord:
    names = [c for c in JOB_COLUMNS if c != "pr_number"] + ["pr_number"]
    raw = dict(zip(names, row, strict=True))
    values: dict[str, Any] = {}
    for name in JOB_COLUMNS:
        value = raw[name]
        if name in {"started_at", "finished_at", "ingested_at"}:
            value = from_text(value)
        elif name in {"context", "mentions"}:
            value = tuple(value.split(_SEP)) if value else ()
        values[name] = value
    return JobRecord(**values)
