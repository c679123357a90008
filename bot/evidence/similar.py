"""Failures similar to the prior failing runs: the same root-cause family seen elsewhere.

Relevance finds the failures that mention a PR's files. Their signatures are then looked
up in the failure index for failing jobs of the same repository and window whose
signature is close (pg_trgm's trigram similarity, bot/evidence/index_similar.py): the
same failure on other jobs, on other branches, or after changes to other files. That is
what tells an author "this OOM is not yours alone". The lookup is the caller's
(bot/evidence/lookup.py, at the edge); this module only sorts what came back (pure).

Failures already counted under a related one (same job, same signature) are left out;
the rest are grouped by job and signature, so one noisy job shows once, with its count.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.evidence.records import JobRecord, SimilarFailure
from bot.evidence.relevance import RelatedFailure, Relevance, failure_key

MAX_SEEDS = 5  # signatures looked up: those of the newest related failures
MAX_SIMILAR = 5  # lines shown; the rest are counted
PER_SEED = 50  # candidates per signature (a noisy related job's own repeats come first)
_EPOCH = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class SimilarLine:
    job: JobRecord  # the newest failure of its group (job and signature)
    similarity: float  # to the signature of `like`
    like: JobRecord  # the related failure it resembles
    occurrences: int  # failures of this job with this signature among the candidates


@dataclass(frozen=True)
class Similar:
    lines: tuple[SimilarLine, ...]
    omitted: int  # groups beyond the cap


NOTHING = Similar((), 0)


def seeds(relevance: Relevance, limit: int = MAX_SEEDS) -> list[RelatedFailure]:
    """The related failures whose signatures are worth a lookup: one per signature."""
    chosen: dict[str, RelatedFailure] = {}
    for related in relevance.related:
        signature = related.job.signature
        if signature and signature not in chosen:
            chosen[signature] = related
    return list(chosen.values())[:limit]


def group_similar(relevance: Relevance,
                  found: Iterable[tuple[RelatedFailure, list[SimilarFailure]]], *,
                  limit: int = MAX_SIMILAR) -> Similar:
    """The lookups' answers, per seed, as deduplicated lines: most similar first."""
    counted = {failure_key(r.job) for r in relevance.related}
    groups: dict[tuple[tuple[str, str, str], str], list[SimilarLine]] = {}
    for related, answers in found:
        for answer in answers:
            key = failure_key(answer.job)
            if key in counted:
                continue  # already in the table, as an occurrence of a related failure
            groups.setdefault(key, []).append(
                SimilarLine(answer.job, answer.similarity, related.job, 1))
    lines = []
    for members in groups.values():
        # The best match of the group names the seed; the newest member is shown.
        best = max(members, key=lambda m: m.similarity)
        newest = max(members, key=lambda m: _moment(m.job))
        jobs = {(m.job.provider, m.job.job_id, m.job.attempt) for m in members}
        lines.append(SimilarLine(newest.job, best.similarity, best.like, len(jobs)))
    # Stable sorts, least significant first: most similar, then newest, then job id.
    lines.sort(key=lambda line: line.job.job_id)
    lines.sort(key=lambda line: _moment(line.job), reverse=True)
    lines.sort(key=lambda line: line.similarity, reverse=True)
    return Similar(tuple(lines[:limit]), max(len(lines) - limit, 0))


def _moment(job: JobRecord) -> datetime:
    return job.finished_at or job.started_at or job.ingested_at or _EPOCH
