"""The failure index over time, for the dashboard: recent failures, signatures per day,
and flaky / broken-trunk / new counts per week (pure; the caller hands in jobs and now).

The kinds follow `relevance.py`, without a pull request to relate them to:

* **broken trunk** — failed on a trunk branch (no PR) and did not pass on retry on
  that commit;
* **flaky** — that job also passed on the same commit;
* **new** — the first failure with its signature in the window;
* **recurring** — everything else.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from bot.evidence.records import PASSED, JobRecord

TRUNK_BRANCHES = ("main", "master", "trunk")
KINDS = ("broken trunk", "flaky", "new", "recurring")
MAX_SIGNATURES = 8


@dataclass(frozen=True)
class Failure:
    job: JobRecord
    when: datetime
    kind: str


@dataclass(frozen=True)
class SignatureSeries:
    signature: str
    category: str | None
    total: int
    per_day: tuple[int, ...]  # one count per day of `Trends.days`


@dataclass(frozen=True)
class Week:
    start: date  # a Monday
    counts: dict[str, int]  # kind -> failures


@dataclass(frozen=True)
class Trends:
    failures: tuple[Failure, ...]  # newest first
    days: tuple[date, ...]
    signatures: tuple[SignatureSeries, ...]  # most frequent first
    weeks: tuple[Week, ...]  # oldest first
    jobs_seen: int


def _when(job: JobRecord) -> datetime | None:
    return job.finished_at or job.started_at or job.ingested_at


def _key(job: JobRecord) -> str:
    return job.signature or f"{job.job_name}: {job.category or 'unknown'}"


def _kinds(failures: list[tuple[JobRecord, datetime]], passed: set[tuple[str, str, str]],
           trunk: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    kinds: list[str] = []
    for job, _ in failures:  # oldest first, so "new" means first in the window
        retried = (job.repo, job.commit_sha or "", job.job_name) in passed
        if job.pr_number is None and job.branch in trunk and not retried:
            kind = "broken trunk"
        elif retried:
            kind = "flaky"
        elif _key(job) not in seen:
            kind = "new"
        else:
            kind = "recurring"
        seen.add(_key(job))
        kinds.append(kind)
    return kinds


def trends(jobs: Iterable[JobRecord], *, now: datetime, days: int = 28,
           trunk: Sequence[str] = TRUNK_BRANCHES, limit: int = 200) -> Trends:
    start = (now - timedelta(days=days - 1)).astimezone(UTC).date()
    timed = [(j, w.astimezone(UTC)) for j in jobs if (w := _when(j)) is not None
             and start <= w.astimezone(UTC).date() <= now.astimezone(UTC).date()]
    passed = {(j.repo, j.commit_sha or "", j.job_name) for j, _ in timed
              if j.conclusion == PASSED and j.commit_sha}
    failing = sorted(((j, w) for j, w in timed if j.failed), key=lambda jw: (jw[1], jw[0].job_id))
    kinds = _kinds(failing, passed, trunk)
    day_list = tuple(start + timedelta(days=i) for i in range(days))
    by_signature: dict[str, Counter[date]] = defaultdict(Counter)
    category: dict[str, str | None] = {}
    weeks: dict[date, Counter[str]] = {}
    for monday in sorted({d - timedelta(days=d.weekday()) for d in day_list}):
        weeks[monday] = Counter()
    for (job, when), kind in zip(failing, kinds, strict=True):
        by_signature[_key(job)][when.date()] += 1
        category.setdefault(_key(job), job.category)
        weeks[when.date() - timedelta(days=when.date().weekday())][kind] += 1
    ranked = sorted(by_signature.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    series = tuple(
        SignatureSeries(sig, category[sig], sum(counts.values()),
                        tuple(counts.get(d, 0) for d in day_list))
        for sig, counts in ranked[:MAX_SIGNATURES]
    )
    newest = [Failure(j, w, k) for (j, w), k in zip(failing, kinds, strict=True)][::-1]
    return Trends(
        failures=tuple(newest[:limit]), days=day_list, signatures=series,
        weeks=tuple(Week(m, {k: c[k] for k in KINDS}) for m, c in weeks.items()),
        jobs_seen=len(timed),
    )
