"""What the failure index holds, and the narrow interface every backend implements.

Plain frozen records and a `Protocol`: relevance, rendering and the CLI depend on
these, never on SQLite, so a PostgreSQL backend can replace `SqliteFailureIndex`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

PROVIDERS = ("github-actions", "buildkite")
FAILED = "failure"
PASSED = "success"


@dataclass(frozen=True)
class RunRecord:
    """One workflow run (GitHub Actions) or build (Buildkite)."""

    provider: str
    run_id: str
    repo: str
    pipeline: str
    workflow_path: str | None = None
    branch: str | None = None
    commit_sha: str | None = None
    pr_number: int | None = None
    url: str | None = None
    event: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    conclusion: str | None = None
    # True once every job of the run is in the index (backfill skips the run then).
    jobs_complete: bool = False


@dataclass(frozen=True)
class JobRecord:
    """One attempt of one job, with the root cause of its log when it failed."""

    provider: str
    job_id: str
    attempt: int
    repo: str
    pipeline: str
    job_name: str
    conclusion: str
    run_id: str | None = None
    workflow_path: str | None = None
    step: str | None = None
    branch: str | None = None
    commit_sha: str | None = None
    pr_number: int | None = None
    url: str | None = None
    run_url: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    category: str | None = None
    line: str | None = None
    line_no: int | None = None
    signature: str | None = None
    surface: str | None = None
    surface_line_no: int | None = None
    # Lines around the root cause, and file names / test ids the log mentioned:
    # what relevance matches a PR's changed files against.
    context: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()
    # Why there is no root cause (log expired, too large, no pattern matched).
    log_note: str | None = None
    ingested_at: datetime | None = None
    # What the root cause explains, as `logs extract` prints it:
    # "exit-code at line 812 ← server-start-timeout at line 790 ← cuda-oom at line 640".
    chain: str | None = None

    @property
    def failed(self) -> bool:
        return self.conclusion == FAILED


@dataclass(frozen=True)
class JobQuery:
    """Filters for `FailureIndex.jobs`; every given filter must hold."""

    repo: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    conclusions: tuple[str, ...] = ()
    job_names: tuple[str, ...] = ()
    signatures: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    # Case-insensitive substrings, any of which must occur in a job's searchable text
    # (name, step, pipeline, workflow path, root-cause line, context, mentions).
    text_any: tuple[str, ...] = ()
    job_name_like: str | None = None
    signature_like: str | None = None
    limit: int = 500


@dataclass(frozen=True)
class SimilarFailure:
    """A failing job whose signature is close to the one looked up (`similar_failures`)."""

    job: JobRecord
    similarity: float  # 0..1, pg_trgm's trigram similarity on both backends


@dataclass(frozen=True)
class Coverage:
    """How much the index knows about a repository, and how fresh it is."""

    jobs: int
    failures: int
    oldest: datetime | None
    newest: datetime | None


class FailureIndex(Protocol):
    def upsert_run(self, run: RunRecord, *, now: datetime) -> None: ...
    def upsert_job(self, job: JobRecord, *, now: datetime) -> None: ...
    def has_job(self, provider: str, job_id: str, attempt: int) -> bool: ...
    def run_complete(self, provider: str, run_id: str) -> bool: ...
    def has_run(self, provider: str, run_id: str) -> bool: ...
    def jobs(self, query: JobQuery) -> list[JobRecord]: ...
    def similar_failures(self, text: str, query: JobQuery | None = None, *,
                         threshold: float = ..., portable: bool = False
                         ) -> list[SimilarFailure]: ...
    def similar_failures_many(self, texts: Sequence[str], query: JobQuery | None = None, *,
                              threshold: float = ..., portable: bool = False
                              ) -> list[list[SimilarFailure]]: ...
    def coverage(self, repo: str | None = None) -> Coverage: ...
    def prune(self, older_than: datetime) -> int: ...
    def get_cursor(self, source: str) -> str | None: ...
    def set_cursor(self, source: str, value: str, *, now: datetime) -> None: ...
    def close(self) -> None: ...


# -- time as text --------------------------------------------------------------------------
# ISO-8601 UTC with a Z: sorts lexicographically in the same order as in time.
def to_text(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def from_text(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
