"""Load from the index what relevance needs for one pull request, and run it.

Two narrow queries instead of the whole window: failures whose searchable text
contains one of the PR's needles (a database pre-filter; relevance then checks
whole-token matches), and then the jobs that classify those failures — the same
signatures anywhere, the same commits (passes included), the same job names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.needles import needles_for
from bot.evidence.records import FAILED, FailureIndex, JobQuery, JobRecord
from bot.evidence.relevance import DEFAULT_WINDOW_DAYS, MAX_RELATED, Relevance, find_related
from bot.evidence.section import DEFAULT_BUDGET, attach
from bot.evidence.similar import NOTHING, PER_SEED, Similar, group_similar, seeds

MAX_CANDIDATES = 1000
MAX_COMPARISON = 5000
_IN_CHUNK = 200


def _chunks(values: Sequence[str]) -> list[tuple[str, ...]]:
    return [tuple(values[i:i + _IN_CHUNK]) for i in range(0, len(values), _IN_CHUNK)]


def load_jobs(index: FailureIndex, snapshot: PullRequestSnapshot, *, now: datetime,
              window_days: int = DEFAULT_WINDOW_DAYS) -> list[JobRecord]:
    needles = needles_for(snapshot)
    if not needles:
        return []
    since = now - timedelta(days=window_days)
    texts = tuple(dict.fromkeys(n.text for n in needles))
    candidates = index.jobs(JobQuery(repo=snapshot.repo, since=since, until=now,
                                     conclusions=(FAILED,), text_any=texts,
                                     limit=MAX_CANDIDATES))
    found: dict[tuple[str, str, int], JobRecord] = {}
    for job in candidates:
        found[(job.provider, job.job_id, job.attempt)] = job
    signatures = sorted({j.signature for j in candidates if j.signature})
    commits = sorted({j.commit_sha for j in candidates if j.commit_sha})
    names = sorted({j.job_name for j in candidates})
    queries = (
        [JobQuery(repo=snapshot.repo, since=since, until=now, signatures=chunk,
                  conclusions=(FAILED,), limit=MAX_COMPARISON) for chunk in _chunks(signatures)]
        + [JobQuery(repo=snapshot.repo, since=since, until=now, commits=chunk,
                    limit=MAX_COMPARISON) for chunk in _chunks(commits)]
        + [JobQuery(repo=snapshot.repo, since=since, until=now, job_names=chunk,
                    conclusions=(FAILED,), limit=MAX_COMPARISON) for chunk in _chunks(names)]
    )
    for query in queries:
        for job in index.jobs(query):
            found.setdefault((job.provider, job.job_id, job.attempt), job)
    return list(found.values())


def prior_failing_runs(index: FailureIndex, snapshot: PullRequestSnapshot, *, now: datetime,
                       window_days: int = DEFAULT_WINDOW_DAYS, limit: int = MAX_RELATED
                       ) -> Relevance:
    """The related, classified failures for a PR, with the index's coverage and age."""
    jobs = load_jobs(index, snapshot, now=now, window_days=window_days)
    return find_related(snapshot, jobs, now=now, window_days=window_days,
                        coverage=index.coverage(snapshot.repo), limit=limit)


def similar_failures(index: FailureIndex, relevance: Relevance, repo: str | None) -> Similar:
    """Failures of `repo` in the window whose signature resembles a related failure's."""
    if repo is None or not relevance.related:
        return NOTHING  # a clean PR asks the index nothing more
    scope = JobQuery(repo=repo, since=relevance.window_start, until=relevance.now,
                     limit=PER_SEED)
    chosen = seeds(relevance)
    answers = index.similar_failures_many([s.job.signature or "" for s in chosen], scope)
    return group_similar(relevance, zip(chosen, answers, strict=True))


def evidence_decorator(index: FailureIndex, *, now: datetime,
                       window_days: int = DEFAULT_WINDOW_DAYS, budget: int = DEFAULT_BUDGET
                       ) -> Callable[[Report, PullRequestSnapshot], Report]:
    """A `ReviewRequest.decorate`: adds "Prior failing runs" (with the similar failures
    elsewhere) and the run links to a report. The index is read here, in the closure the
    edge hands in (the App's hook, the CLI's --evidence-db); the rendering is pure."""

    def decorate(report: Report, snapshot: PullRequestSnapshot) -> Report:
        relevance = prior_failing_runs(index, snapshot, now=now, window_days=window_days)
        similar = similar_failures(index, relevance, snapshot.repo)
        return attach(report, relevance, similar, budget=budget)

    return decorate


def index_digest(index: FailureIndex, repo: str | None) -> str:
    """For `ReviewRequest.extra_digest`: changes whenever the repository's index does, so a
    review whose only new input is fresh CI evidence is not skipped as unchanged."""
    coverage = index.coverage(repo)
    newest = coverage.newest.isoformat() if coverage.newest else "-"
    return f"ci-index:{coverage.jobs}:{coverage.failures}:{newest}"
