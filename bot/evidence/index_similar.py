"""Similar-failure lookups: failures whose signature is close to, not equal to, a given one.

The measure is pg_trgm's trigram similarity on both backends, so the same near-duplicates
are found whichever database holds the index:

* on PostgreSQL with the `pg_trgm` extension, the `%` operator against a GIN trigram
  index on `LOWER(ci_jobs.signature)` (migration 3 of the failure index) does the work;
* everywhere else (SQLite, or a PostgreSQL where the extension could not be created) the
  portable method reads the distinct failure signatures of the window and scores them
  here with `similarity()`, a port of pg_trgm's: lower-cased alphanumeric words, each
  padded with two spaces in front and one behind, the set of their 3-character
  substrings, and |common| / |union| rounded to a 4-byte float as PostgreSQL does.

Everything but the candidate selection (the filters, the row decoding, the order) is the
failure index's ordinary job query, shared by both paths.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from bot.evidence.index_query import job_from_row, job_select_sql, job_where
from bot.evidence.records import FAILED, JobQuery, JobRecord, SimilarFailure
from bot.store.db import Db

DEFAULT_THRESHOLD = 0.4  # pg_trgm's default is 0.3; see BENCHMARKS.md for the real pairs
TRIGRAM_INDEX = "ci_jobs_signature_trgm"
_WORD = re.compile(r"[^\W_]+")  # pg_trgm's words: runs of alphanumerics (no underscore)
_IN_CHUNK = 200
_EPOCH = datetime.min.replace(tzinfo=UTC)


@lru_cache(maxsize=16384)
def _word_trigrams(word: str) -> frozenset[str]:
    padded = f"  {word} "
    return frozenset(padded[i:i + 3] for i in range(len(padded) - 2))


@lru_cache(maxsize=4096)
def trigrams(text: str) -> frozenset[str]:
    # Per word, cached: signatures share a small vocabulary (test and module names,
    # error words), so a window of 10,000 distinct signatures is ~3x faster to trigram
    # from the words' sets than by slicing each signature (bench/bench_review_similar.py).
    return frozenset().union(*map(_word_trigrams, set(_WORD.findall(text.lower()))))


def _float4(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def similarity(left: str, right: str) -> float:
    """pg_trgm's `similarity(left, right)`; 0 when either has no trigram."""
    return _score(trigrams(left), trigrams(right))


def _score(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    common = len(a & b)
    return _float4(common / (len(a) + len(b) - common))


def _order(found: list[SimilarFailure]) -> list[SimilarFailure]:
    """Most similar first, then newest, then job id: the same order as the SQL."""
    found.sort(key=lambda s: s.job.job_id)
    found.sort(key=lambda s: s.job.finished_at or s.job.ingested_at or _EPOCH, reverse=True)
    found.sort(key=lambda s: s.similarity, reverse=True)
    return found


def _failures(query: JobQuery, limit: int) -> JobQuery:
    return replace(query, conclusions=(FAILED,), limit=limit)


def portable_similar(db: Db, texts: Sequence[str], query: JobQuery, threshold: float,
                     limit: int) -> list[list[SimilarFailure]]:
    """Score the window's distinct failure signatures here; then load their jobs. Several
    texts share one read of the signatures and one trigram set per signature (a review
    looks up the signatures of all its related failures at once)."""
    scope = _failures(query, limit)
    where, params = job_where(scope, db.postgres)
    where.append("j.signature IS NOT NULL")
    rows = db.execute(
        "SELECT DISTINCT j.signature FROM ci_jobs j"
        f" WHERE {' AND '.join(where)}", params).fetchall()
    scores: list[dict[float, list[str]]] = [{} for _ in texts]
    wanted = [(trigrams(text), by_score) for text, by_score in zip(texts, scores, strict=True)]
    for (signature,) in rows:
        name = str(signature)
        grams = trigrams(name)  # once per signature, whatever the number of texts
        for seed, by_score in wanted:
            score = _score(seed, grams)
            if score >= threshold:
                by_score.setdefault(score, []).append(name)
    return [_load_scored(db, scope, by_score, limit) for by_score in scores]


def _load_scored(db: Db, scope: JobQuery, by_score: dict[float, list[str]],
                 limit: int) -> list[SimilarFailure]:
    # Best score first; within one score the jobs come newest first, as in the SQL, so
    # each score's `LIMIT` keeps exactly the rows the single trigram query would.
    found: list[SimilarFailure] = []
    for score in sorted(by_score, reverse=True):
        if len(found) >= limit:
            break
        group: list[SimilarFailure] = []
        names = sorted(by_score[score])
        for start in range(0, len(names), _IN_CHUNK):
            chunk = replace(scope, signatures=tuple(names[start:start + _IN_CHUNK]))
            group.extend(SimilarFailure(job, score)
                         for job in _select(db, chunk, limit - len(found)))
        found.extend(_order(group)[:limit - len(found)])
    return found


def _select(db: Db, query: JobQuery, limit: int) -> list[JobRecord]:
    where, params = job_where(query, db.postgres)
    rows = db.execute(job_select_sql(where, ""), [*params, limit]).fetchall()
    return [job_from_row(row) for row in rows]


def trigram_similar(db: Db, text: str, query: JobQuery, threshold: float,
                    limit: int) -> list[SimilarFailure]:
    """PostgreSQL with pg_trgm: `signature % text` under the session's threshold, which
    the GIN trigram index answers; `similarity()` orders the matches."""
    where, params = job_where(_failures(query, limit), postgres=True)
    # `%%` is psycopg's escape for the `%` operator; LOWER() matches the index's expression.
    where.append("LOWER(j.signature) %% LOWER(?)")
    sql = job_select_sql(where, "similarity(LOWER(j.signature), LOWER(?))").replace("?", "%s")
    args: list[Any] = [text, *params, text, limit]  # the score comes first in the SELECT
    with db.transaction() as tx:
        # SET LOCAL: the threshold lasts for this transaction only.
        tx.execute("SELECT set_config('pg_trgm.similarity_threshold', ?, true)",
                   (repr(float(threshold)),))
        # The planner prices `%` as cheap and scans the table, re-trigramming every row
        # (~100 µs a row: 1.1-2.0 s at 10,000 failures); the GIN bitmap scan took 0.21-0.26 s
        # (bench/bench_similar.py). Leave it nothing else for this transaction.
        tx.execute("SELECT set_config('enable_seqscan', 'off', true),"
                   " set_config('enable_indexscan', 'off', true)")
        # Not tx.execute: Db refuses a statement holding '%', which this operator needs.
        rows = tx.raw.execute(sql, args).fetchall()
    # psycopg reads a real as its shortest decimal; back to the exact 4-byte value.
    return [SimilarFailure(job_from_row(row[:-1]), _float4(float(row[-1]))) for row in rows]


