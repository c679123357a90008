"""Similar-failure lookups on a real SQLite file and the real PostgreSQL (pg_trgm), on the
root causes of the real CI log excerpts in tests/data/ci-logs: both backends find the same
near-duplicates with the same scores, and PostgreSQL without the extension falls back."""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from bot.evidence.index import (
    SCHEMA_VERSION,
    JobQuery,
    JobRecord,
    SimilarFailure,
    SqlFailureIndex,
    SqliteFailureIndex,
    open_failure_index,
)
from bot.evidence.index_query import job_select_sql, job_where
from bot.evidence.index_similar import TRIGRAM_INDEX, similarity, trigrams
from tests.evidence.factories import CI_LOGS, NOW, job
from tests.pg import PgServer

LOGS = sorted(CI_LOGS.glob("*.log"))
NCCL = "vllm-issue-42183-nccl-unhandled-cuda-error"  # vLLM's wording of the NCCL failure
NCCL_OMNI = "vllm-omni-issue-4163-nccl-distbackenderror"  # vllm-omni's, through c10d


def _real_failures() -> list[JobRecord]:
    return [job(p.stem, log=p.read_bytes(), hours_ago=i + 1) for i, p in enumerate(LOGS)]


FAILURES = _real_failures()
BY_ID = {j.job_id: j for j in FAILURES}


def _sig(job_id: str) -> str:
    signature = BY_ID[job_id].signature
    assert signature is not None
    return signature


def _load(index: SqlFailureIndex) -> None:
    for record in FAILURES:
        index.upsert_job(record, now=NOW)
    # The same failure passing on retry, in another repository and out of the window:
    # none of them is a failure of this repository in the window.
    nccl = BY_ID[NCCL]
    index.upsert_job(dataclasses.replace(nccl, attempt=2, conclusion="success"), now=NOW)
    index.upsert_job(dataclasses.replace(nccl, job_id="elsewhere", repo="other/repo"), now=NOW)
    index.upsert_job(dataclasses.replace(nccl, job_id="ancient",
                                         finished_at=NOW - timedelta(days=60)), now=NOW)


@pytest.fixture
def index(empty_index: SqlFailureIndex) -> SqlFailureIndex:
    _load(empty_index)
    return empty_index


def _found(results: list[SimilarFailure]) -> list[tuple[str, float]]:
    return [(r.job.job_id, r.similarity) for r in results]


def test_finds_the_real_near_duplicate_nccl_failure(index: SqlFailureIndex) -> None:
    window = JobQuery(repo="vllm-project/vllm", since=NOW - timedelta(days=14), until=NOW)
    found = _found(index.similar_failures(_sig(NCCL), window))
    # Two projects' logs of one failure: different wording, one unhandled cuda error.
    assert [job_id for job_id, _ in found] == [NCCL, NCCL_OMNI]
    assert found[0][1] == 1.0 and 0.4 <= found[1][1] < 1.0
    assert index.trigram == index.path.startswith("postgresql://")  # which path ran


def test_filters_limit_and_threshold_hold(index: SqlFailureIndex) -> None:
    every = _found(index.similar_failures(_sig(NCCL)))
    assert {job_id for job_id, _ in every} == {NCCL, NCCL_OMNI, "elsewhere", "ancient"}
    assert [s for _, s in every] == sorted((s for _, s in every), reverse=True)
    assert len(index.similar_failures(_sig(NCCL), JobQuery(limit=1))) == 1
    assert _found(index.similar_failures(_sig(NCCL), threshold=0.9,
                                         query=JobQuery(repo="VLLM-project/vllm"))) == [
        (NCCL, 1.0), ("ancient", 1.0)]
    sigbus = _found(index.similar_failures(_sig("pytorch-gha-test-file-sigbus")))
    assert {job_id for job_id, _ in sigbus} == {
        "pytorch-gha-test-file-sigbus", "pytorch-issue-22698-test-c10d-sigsegv"}


def test_bad_input_finds_nothing_or_is_a_clear_error(index: SqlFailureIndex) -> None:
    assert index.similar_failures("") == []
    assert index.similar_failures("::: <> ---") == []
    with pytest.raises(ValueError, match="between 0 and 1"):
        index.similar_failures(_sig(NCCL), threshold=1.5)


def test_both_backends_find_the_same_near_duplicates_for_every_real_log(
        pg_url: str, tmp_path: Path) -> None:
    sqlite_index, pg_index = SqliteFailureIndex(tmp_path / "ci.db"), open_failure_index(pg_url)
    _load(sqlite_index)
    _load(pg_index)
    assert pg_index.trigram and not sqlite_index.trigram
    window = JobQuery(repo="vllm-project/vllm", since=NOW - timedelta(days=14))
    near = 0
    for record in FAILURES:
        if record.signature is None:
            continue
        expected = _found(sqlite_index.similar_failures(record.signature, window, threshold=0.3))
        assert _found(pg_index.similar_failures(record.signature, window, threshold=0.3)) == (
            expected), record.job_id
        assert _found(pg_index.similar_failures(record.signature, window, threshold=0.3,
                                                portable=True)) == expected
        near += sum(1 for _, score in expected if score < 1.0)
    assert near >= 2  # at least the NCCL pair, both ways: not only exact repeats
    sqlite_index.close()
    pg_index.close()


def test_python_trigrams_and_similarity_equal_pg_trgm_on_real_signatures(pg_url: str) -> None:
    index = open_failure_index(pg_url)  # creates the extension in the session database
    signatures = sorted({r.signature for r in FAILURES if r.signature})
    with psycopg.connect(pg_url) as conn:
        for left in signatures:
            (shown,) = conn.execute("SELECT show_trgm(%s)", (left,)).fetchone()
            assert {g.strip() for g in shown} == {g.strip() for g in trigrams(left)}
            assert len(shown) == len(trigrams(left))
            scores = conn.execute(
                "SELECT similarity(%s, s) FROM unnest(%s::text[]) AS s", (left, signatures)
            ).fetchall()
            for right, (score,) in zip(signatures, scores, strict=True):
                assert abs(float(score) - similarity(left, right)) < 1e-6, (left, right)
    index.close()


def _plan(conn: psycopg.Connection[tuple[str]], sql: str, params: list[object]) -> str:
    return "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, params))


def test_postgres_lookup_can_use_the_gin_trigram_index(pg_url: str) -> None:
    index = open_failure_index(pg_url)
    with psycopg.connect(pg_url) as conn:
        conn.execute("SET enable_seqscan = off")
        assert TRIGRAM_INDEX in _plan(
            conn, "SELECT job_id FROM ci_jobs WHERE LOWER(signature) %% LOWER(%s)", [_sig(NCCL)])
    index.close()


def test_exact_signature_lookups_stay_off_the_trigram_index(pg_url: str) -> None:
    """pg_trgm's GIN class answers `=` too; on the bare column the planner chose it for
    lookup.py's `signature IN (...)` and made those lookups ~100x slower."""
    index = open_failure_index(pg_url)
    _load(index)
    where, params = job_where(JobQuery(signatures=(_sig(NCCL), _sig(NCCL_OMNI))), True)
    with psycopg.connect(pg_url) as conn:
        conn.execute("ANALYZE ci_jobs")
        conn.execute("SET enable_seqscan = off")  # any usable index would now be taken
        plan = _plan(conn, job_select_sql(where).replace("?", "%s"), [*params, 10])
    assert TRIGRAM_INDEX not in plan
    index.close()


def test_migrates_version_2_to_3_on_both_backends(pg_url: str, tmp_path: Path) -> None:
    path = tmp_path / "ci.db"
    SqliteFailureIndex(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ci_schema SET version = 2 WHERE name = 'failure_index'")
    SqliteFailureIndex(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version FROM ci_schema").fetchone()[0] == SCHEMA_VERSION
    open_failure_index(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX {TRIGRAM_INDEX}")
        conn.execute("UPDATE ci_schema SET version = 2 WHERE name = 'failure_index'")
    again = open_failure_index(pg_url)
    assert again.trigram
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT version FROM ci_schema").fetchone()[0] == SCHEMA_VERSION
    again.close()


@pytest.fixture
def no_extension_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh database without pg_trgm, and a role that may create tables in it but not
    extensions (no CREATE on the database): the extension cannot be created."""
    admin = pg_server.admin_url
    pg_server.database_url()  # skips, or under CI fails, when no PostgreSQL answers
    name = f"{pg_server.name}_noext_{uuid.uuid4().hex[:6]}"
    role, password = f"cistab_noext_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        conn.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
    parts = urlsplit(admin)
    with psycopg.connect(urlunsplit(parts._replace(path=f"/{name}")), autocommit=True) as conn:
        conn.execute(f'GRANT USAGE, CREATE ON SCHEMA public TO "{role}"')
    netloc = f"{role}:{password}@{parts.hostname}{f':{parts.port}' if parts.port else ''}"
    user_url = urlunsplit(parts._replace(netloc=netloc, path=f"/{name}"))
    try:
        yield user_url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'DROP ROLE IF EXISTS "{role}"')


def test_postgres_without_pg_trgm_falls_back_with_a_notice(
        no_extension_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="bot.evidence"):
        pg_index = open_failure_index(no_extension_url)
    assert not pg_index.trigram
    assert any("cannot use pg_trgm" in r.getMessage() and "portable method" in r.getMessage()
               for r in caplog.records)
    sqlite_index = SqliteFailureIndex(tmp_path / "ci.db")
    _load(pg_index)
    _load(sqlite_index)
    for job_id in (NCCL, NCCL_OMNI, "pytorch-gha-test-file-sigbus"):
        expected = _found(sqlite_index.similar_failures(_sig(job_id)))
        assert _found(pg_index.similar_failures(_sig(job_id))) == expected
        assert len(expected) >= 2
    pg_index.close()
    sqlite_index.close()


def test_the_limit_keeps_the_most_similar_not_the_newest(index: SqlFailureIndex) -> None:
    omni = BY_ID[NCCL_OMNI]
    for i in range(5):  # newer than everything, but less similar to the NCCL failure
        index.upsert_job(dataclasses.replace(omni, job_id=f"omni-{i}",
                                             finished_at=NOW - timedelta(minutes=i)), now=NOW)
    top = _found(index.similar_failures(_sig(NCCL), JobQuery(limit=3)))
    assert [score for _, score in top] == [1.0, 1.0, 1.0]
    assert {job_id for job_id, _ in top} == {NCCL, "elsewhere", "ancient"}
    more = _found(index.similar_failures(_sig(NCCL), JobQuery(limit=5)))
    assert [job_id for job_id, _ in more[3:]] == ["omni-0", "omni-1"]


def test_many_lookups_at_once_equal_one_at_a_time(index: SqlFailureIndex) -> None:
    window = JobQuery(repo="vllm-project/vllm", since=NOW - timedelta(days=14), limit=4)
    texts = [r.signature for r in FAILURES if r.signature] + ["", "no such failure"]
    for portable in (True, False):
        together = index.similar_failures_many(texts, window, threshold=0.3, portable=portable)
        alone = [index.similar_failures(t, window, threshold=0.3, portable=portable)
                 for t in texts]
        assert [_found(r) for r in together] == [_found(r) for r in alone]
        assert sum(len(r) for r in together) > len(texts)  # not all empty
    assert index.similar_failures_many([], window) == []
