"""Which indexed CI failures relate to a pull request, and what kind of failure each is.

Pure: the caller hands in the snapshot, the indexed jobs (failures that may match,
plus the jobs needed to classify them: same signatures, same commits, same job
names) and the time. Classification follows Dr. CI, in this order:

* **broken trunk** — the same failure (signature) also fails on the base branch, on
  a commit where that job did not pass on retry;
* **flaky** — the job failed and passed on the same commit;
* **recurring** — the same failure was seen on other pull requests' runs;
* **new** — none of the above.

The result states the window and how old the newest indexed run is, so that stale
evidence is never mistaken for fresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.needles import (
    Needle,
    NeedleKind,
    boundary_pattern,
    label_matches,
    needles_for,
    normalize_label,
)
from bot.evidence.records import PASSED, Coverage, JobRecord

DEFAULT_WINDOW_DAYS = 14
MAX_RELATED = 25


class Classification(StrEnum):
    BROKEN_TRUNK = "broken trunk"
    FLAKY = "flaky"
    RECURRING = "recurring"
    NEW = "new"


@dataclass(frozen=True)
class Match:
    needle: Needle
    where: str  # "job name", "log", …
    text: str  # what in the job matched (a mention, the step name)


@dataclass(frozen=True)
class RelatedFailure:
    job: JobRecord  # the most recent failure of this job with this signature
    classification: Classification
    matches: tuple[Match, ...]
    occurrences: int  # failures of this job with this signature in the window
    first_seen: datetime | None
    last_seen: datetime | None
    other_prs: tuple[int, ...]  # other pull requests where the same failure was seen
    base_failures: int  # failures with this signature on the base branch
    passed_on_same_commit: JobRecord | None  # the passing attempt, for flaky ones

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.needle.path for m in self.matches))


@dataclass(frozen=True)
class Relevance:
    related: tuple[RelatedFailure, ...]
    omitted: int  # related failures beyond the cap
    now: datetime
    window_days: int
    base_branch: str
    coverage: Coverage | None
    needles: tuple[Needle, ...]

    @property
    def window_start(self) -> datetime:
        return self.now - timedelta(days=self.window_days)

    def freshness(self) -> str:
        return describe_freshness(self.coverage, self.now, self.window_days)


def _when(job: JobRecord) -> datetime | None:
    return job.finished_at or job.started_at or job.ingested_at


def _recency(job: JobRecord) -> tuple[datetime, str]:
    return (_when(job) or datetime.min.replace(tzinfo=UTC), job.job_id)


def format_age(delta: timedelta) -> str:
    seconds = max(int(delta.total_seconds()), 0)
    if seconds < 3600:
        return f"{max(seconds // 60, 1)} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def describe_freshness(coverage: Coverage | None, now: datetime, window_days: int) -> str:
    """E.g. 'window: last 14 days; index covers 2026-11-01 … 2026-11-29; newest run 3 h old'."""
    window = f"window: last {window_days} days"
    if coverage is None or coverage.newest is None or coverage.oldest is None:
        return f"{window}; the failure index holds no runs for this repository"
    age = now - coverage.newest
    stale = " — stale, ingestion may have stopped" if age > timedelta(days=2) else ""
    return (
        f"{window}; index covers {coverage.oldest:%Y-%m-%d} … {coverage.newest:%Y-%m-%d} "
        f"({coverage.jobs} jobs); newest run {format_age(age)} old{stale}"
    )


# -- matching -------------------------------------------------------------------------------
def _fields(job: JobRecord) -> list[tuple[str, str]]:
    out = [("job name", job.job_name), ("pipeline", job.pipeline)]
    out += [("step", job.step)] if job.step else []
    out += [("workflow", job.workflow_path)] if job.workflow_path else []
    out += [("root-cause line", job.line)] if job.line else []
    out += [("surface symptom", job.surface)] if job.surface else []
    out += [("log", line) for line in (*job.context, *job.mentions)]
    return out


def _exact_match(needle: Needle, job: JobRecord) -> Match | None:
    if needle.kind is NeedleKind.WORKFLOW_FILE:
        path = job.workflow_path or ""
        return Match(needle, "workflow", path) if path == needle.text else None
    if needle.kind is NeedleKind.WORKFLOW_NAME:
        ok = label_matches(needle.text, job.pipeline)
        return Match(needle, "workflow", job.pipeline) if ok else None
    if label_matches(needle.text, job.job_name):
        return Match(needle, "job name", job.job_name)
    if job.step and label_matches(needle.text, job.step):
        return Match(needle, "step", job.step)
    return None


class NeedleMatcher:
    """Which needles a job matches, and where (exact labels, whole-token text)."""

    def __init__(self, needles: Sequence[Needle]) -> None:
        self.exact = [n for n in needles if n.exact]
        self.patterns = [(n, boundary_pattern(n.text)) for n in needles if not n.exact]

    def matches(self, job: JobRecord) -> tuple[Match, ...]:
        found: list[Match] = []
        for needle in self.exact:
            match = _exact_match(needle, job)
            if match is not None:
                found.append(match)
        fields = _fields(job)
        for needle, pattern in self.patterns:
            hit = next(((where, text) for where, text in fields if pattern.search(text)), None)
            if hit is not None:
                found.append(Match(needle, hit[0], hit[1]))
        return tuple(found)


# -- classification ---------------------------------------------------------------------------
def _job_key(job: JobRecord) -> tuple[str, str, str]:
    return (job.provider, job.pipeline.lower(), normalize_label(job.job_name))


def failure_key(job: JobRecord) -> tuple[tuple[str, str, str], str]:
    """One failure of one job: what a related failure groups (and similar.py leaves out)."""
    return (_job_key(job), job.signature or "")


@dataclass
class _Universe:
    """Lookups over every job in the window."""

    passing_job: dict[tuple[tuple[str, str, str], str], JobRecord]
    failures_by_signature: dict[str, list[JobRecord]]
    failures_by_key: dict[tuple[tuple[str, str, str], str], list[JobRecord]]

    @classmethod
    def build(cls, jobs: Iterable[JobRecord]) -> _Universe:
        universe = cls({}, {}, {})
        for job in jobs:
            if job.conclusion == PASSED and job.commit_sha:
                universe.passing_job.setdefault((_job_key(job), job.commit_sha), job)
            elif job.failed:
                if job.signature:
                    universe.failures_by_signature.setdefault(job.signature, []).append(job)
                universe.failures_by_key.setdefault(failure_key(job), []).append(job)
        return universe

    def passed_on_commit(self, job: JobRecord) -> JobRecord | None:
        if not job.commit_sha:
            return None
        return self.passing_job.get((_job_key(job), job.commit_sha))


def _origin(job: JobRecord) -> str:
    """The pull request (or, failing that, branch / commit) a job ran for."""
    if job.pr_number is not None:
        return f"#{job.pr_number}"
    return f"branch {job.branch}" if job.branch else f"commit {job.commit_sha}"


def _classify(group: list[JobRecord], universe: _Universe, base_branch: str,
              snapshot: PullRequestSnapshot) -> tuple[Classification, int, tuple[int, ...],
                                                       JobRecord | None]:
    latest = group[0]
    same: list[JobRecord] = (
        universe.failures_by_signature.get(latest.signature, [])
        if latest.signature else universe.failures_by_key.get(failure_key(latest), [])
    )
    on_base = [j for j in same if j.branch == base_branch and j.pr_number is None]
    trunk = [j for j in on_base if universe.passed_on_commit(j) is None]
    passed = next((p for j in group if (p := universe.passed_on_commit(j)) is not None), None)
    # "Other pull requests": not the one this failure ran for, nor the one under review.
    here = {_origin(latest)}
    if snapshot.number is not None:
        here.add(f"#{snapshot.number}")
    if snapshot.head_ref:
        here.add(f"branch {snapshot.head_ref}")
    elsewhere = [
        j for j in same
        if (j.branch != base_branch or j.pr_number is not None) and _origin(j) not in here
    ]
    other_prs = tuple(dict.fromkeys(j.pr_number for j in elsewhere if j.pr_number is not None))
    if trunk:
        kind = Classification.BROKEN_TRUNK
    elif passed is not None or on_base:
        kind = Classification.FLAKY  # on the base branch too, but every time it passed on retry
    elif elsewhere:
        kind = Classification.RECURRING
    else:
        kind = Classification.NEW
    return kind, len(on_base), other_prs, passed


def find_related(
    snapshot: PullRequestSnapshot,
    jobs: Sequence[JobRecord],
    *,
    now: datetime,
    window_days: int = DEFAULT_WINDOW_DAYS,
    coverage: Coverage | None = None,
    limit: int = MAX_RELATED,
) -> Relevance:
    """Failures in the window that mention the PR's changed files, grouped and classified."""
    needles = needles_for(snapshot)
    base_branch = snapshot.base_ref or "main"
    start = now - timedelta(days=window_days)
    in_window = [j for j in jobs if (w := _when(j)) is not None and start <= w <= now]
    in_window.sort(key=_recency, reverse=True)
    universe = _Universe.build(in_window)
    matcher = NeedleMatcher(needles)

    groups: dict[tuple[tuple[str, str, str], str], tuple[list[JobRecord], list[Match]]] = {}
    for job in in_window:
        if not job.failed:
            continue
        found = matcher.matches(job)
        if not found:
            continue
        members, matches = groups.setdefault(failure_key(job), ([], []))
        members.append(job)
        matches.extend(m for m in found if m.needle not in {x.needle for x in matches})

    related: list[RelatedFailure] = []
    for key, (members, matches) in groups.items():
        # Same job, same signature: count every occurrence, logs that lacked the mention too.
        everyone = universe.failures_by_key.get(key, members)
        times = [t for j in everyone if (t := _when(j)) is not None]
        kind, base_count, other_prs, passed = _classify(members, universe, base_branch, snapshot)
        related.append(RelatedFailure(
            job=members[0], classification=kind, matches=tuple(matches),
            occurrences=len(everyone), first_seen=min(times, default=None),
            last_seen=max(times, default=None), other_prs=other_prs,
            base_failures=base_count, passed_on_same_commit=passed,
        ))
    related.sort(key=lambda r: _recency(r.job), reverse=True)
    return Relevance(
        related=tuple(related[:limit]), omitted=max(len(related) - limit, 0), now=now,
        window_days=window_days, base_branch=base_branch, coverage=coverage, needles=needles,
    )
