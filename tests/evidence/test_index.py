"""The failure index on a real SQLite file and on the real PostgreSQL (every test taking
`index` runs on both): upserts, queries, retention, cursors, schema."""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from bot.evidence.index import (
    SCHEMA_VERSION,
    Coverage,
    FailureIndexError,
    JobQuery,
    RunRecord,
    SqlFailureIndex,
    SqliteFailureIndex,
    open_failure_index,
)
from bot.store.base import NewDelivery
from bot.store.sqlite import connect as connect_store
from tests.evidence.factories import NOW, ci_log, job


@pytest.fixture
def index(empty_index: SqlFailureIndex) -> SqlFailureIndex:
    return empty_index  # both backends (tests/evidence/conftest.py)


def test_upsert_is_idempotent_per_provider_job_and_attempt(index: SqlFailureIndex) -> None:
    record = job("j1", log=ci_log("vllm-issue-51071-cuda-oom-b200-pcp.log"))
    index.upsert_job(record, now=NOW)
    index.upsert_job(record, now=NOW + timedelta(minutes=5))
    index.upsert_job(dataclasses.replace(record, attempt=2, conclusion="success"), now=NOW)
    index.upsert_job(dataclasses.replace(record, provider="github-actions"), now=NOW)
    rows = index.jobs(JobQuery(limit=10))
    assert len(rows) == 3
    first = next(r for r in rows if r.provider == "buildkite" and r.attempt == 1)
    assert first.category == "cuda-oom"
    assert first.line_no == 2
    assert first.signature is not None and first.signature.startswith("cuda-oom: ")
    assert first.ingested_at == NOW + timedelta(minutes=5)
    assert first == dataclasses.replace(record, ingested_at=first.ingested_at)


def test_redelivery_without_a_log_keeps_the_earlier_root_cause(index: SqlFailureIndex) -> None:
    analysed = job("j1", log=ci_log("vllm-issue-51071-cuda-oom-b200-pcp.log"))
    index.upsert_job(analysed, now=NOW)
    bare = job("j1", log_note="log unavailable (expired or deleted)")
    index.upsert_job(bare, now=NOW)
    (row,) = index.jobs(JobQuery())
    assert row.category == "cuda-oom" and row.line == analysed.line
    assert row.context == analysed.context and row.mentions == analysed.mentions
    assert row.log_note == "log unavailable (expired or deleted)"


def test_queries_filter_and_order_newest_first(index: SqlFailureIndex) -> None:
    oom = ci_log("vllm-issue-51071-cuda-oom-b200-pcp.log")
    index.upsert_job(job("old", log=oom, hours_ago=30 * 24), now=NOW)
    index.upsert_job(job("a", log=oom, hours_ago=5, commit="1" * 40), now=NOW)
    index.upsert_job(job("b", log=oom, hours_ago=2, name="test_x_y", repo="other/repo"), now=NOW)
    index.upsert_job(job("c", conclusion="success", hours_ago=1, commit="1" * 40), now=NOW)
    since = NOW - timedelta(days=14)
    assert [j.job_id for j in index.jobs(JobQuery(since=since))] == ["c", "b", "a"]
    assert [j.job_id for j in index.jobs(JobQuery(repo="VLLM-project/vllm", since=since))] == [
        "c", "a"]
    failed = index.jobs(JobQuery(since=since, conclusions=("failure",), categories=("cuda-oom",)))
    assert [j.job_id for j in failed] == ["b", "a"]
    assert [j.job_id for j in index.jobs(JobQuery(commits=("1" * 40,)))] == ["c", "a"]
    signature = failed[0].signature
    assert signature is not None
    assert len(index.jobs(JobQuery(signatures=(signature,)))) == 3
    # LIKE wildcards in user input are literal: `_` must not match any character.
    assert [j.job_id for j in index.jobs(JobQuery(job_name_like="x_y"))] == ["b"]
    assert index.jobs(JobQuery(job_name_like="x%y")) == []
    assert [j.job_id for j in index.jobs(JobQuery(text_any=("ALLOCATE",), since=since))] == [
        "b", "a"]
    assert len(index.jobs(JobQuery(limit=1))) == 1


def test_run_pr_number_fills_in_for_jobs(index: SqlFailureIndex) -> None:
    index.upsert_job(job("j", pr=None), now=NOW)
    assert not index.has_run("buildkite", "run-j")
    index.upsert_run(RunRecord("buildkite", "run-j", "vllm-project/vllm", "ci", pr_number=51015),
                     now=NOW)
    assert index.has_run("buildkite", "run-j") and not index.run_complete("buildkite", "run-j")
    (row,) = index.jobs(JobQuery())
    assert row.pr_number == 51015
    # A later, sparser report does not blank what is known, and completion sticks.
    index.upsert_run(RunRecord("buildkite", "run-j", "vllm-project/vllm", "ci",
                               jobs_complete=True), now=NOW)
    index.upsert_run(RunRecord("buildkite", "run-j", "vllm-project/vllm", "ci"), now=NOW)
    assert index.run_complete("buildkite", "run-j")
    assert index.jobs(JobQuery())[0].pr_number == 51015


def test_coverage_and_prune(index: SqlFailureIndex) -> None:
    assert index.coverage() == Coverage(0, 0, None, None)
    index.upsert_job(job("old", hours_ago=40 * 24), now=NOW)
    index.upsert_job(job("new", hours_ago=3), now=NOW)
    index.upsert_job(job("pass", conclusion="success", hours_ago=4), now=NOW)
    index.upsert_job(job("elsewhere", hours_ago=1, repo="other/repo"), now=NOW)
    cover = index.coverage("vllm-project/vllm")
    assert (cover.jobs, cover.failures) == (3, 2)
    assert cover.oldest == NOW - timedelta(days=40)
    assert cover.newest == NOW - timedelta(hours=3)
    assert index.prune(NOW - timedelta(days=30)) == 1
    assert {j.job_id for j in index.jobs(JobQuery())} == {"new", "pass", "elsewhere"}


def test_cursor_round_trip(index: SqlFailureIndex) -> None:
    assert index.get_cursor("buildkite:vllm/ci") is None
    index.set_cursor("buildkite:vllm/ci", "2026-08-01T00:00:00Z", now=NOW)
    index.set_cursor("buildkite:vllm/ci", "2026-08-02T00:00:00Z", now=NOW)
    assert index.get_cursor("buildkite:vllm/ci") == "2026-08-02T00:00:00Z"


def test_shares_a_file_with_the_app_store_without_touching_its_version(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    store = connect_store(path)
    index = SqliteFailureIndex(path)
    index.upsert_job(job("j"), now=NOW)
    assert store.add_deliveries([NewDelivery("d1", "ping", None, b"{}", 0.0, 0.0)]) == [True]
    with store.reading() as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    store.close()
    index.close()
    assert mode == "wal"
    # Reopening in either order works: neither migration sees the other as foreign.
    again = SqliteFailureIndex(path)
    store = connect_store(path)
    with store.reading() as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == version
    assert [j.job_id for j in again.jobs(JobQuery())] == ["j"]
    store.close()
    again.close()


def test_refuses_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "ci.db"
    SqliteFailureIndex(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ci_schema SET version = 99 WHERE name = 'failure_index'")
    with pytest.raises(FailureIndexError, match="schema version 99"):
        SqliteFailureIndex(path)


def test_postgres_shares_the_stores_database_and_refuses_a_newer_schema(pg_url: str) -> None:
    from bot.store import open_store

    store, index = open_store(pg_url), open_failure_index(pg_url)
    index.upsert_job(job("j"), now=NOW)
    assert store.add_deliveries([NewDelivery("d1", "ping", None, b"{}", 0.0, 0.0)]) == [True]
    store.db.execute("UPDATE ci_schema SET version = 99 WHERE name = 'failure_index'")
    with pytest.raises(FailureIndexError, match="schema version 99"):
        open_failure_index(pg_url)
    store.db.execute("UPDATE ci_schema SET version = ? WHERE name = 'failure_index'",
                     (SCHEMA_VERSION,))
    again = open_failure_index(pg_url)
    assert [j.job_id for j in again.jobs(JobQuery())] == ["j"]
    for closable in (store, index, again):
        closable.close()


def test_unopenable_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FailureIndexError, match="cannot open the failure index"):
        SqliteFailureIndex(tmp_path / "missing-dir" / "ci.db")


def test_concurrent_writers(index: SqlFailureIndex) -> None:
    def write(start: int) -> None:
        for n in range(start, start + 50):
            index.upsert_job(job(f"j{n}"), now=NOW)

    threads = [threading.Thread(target=write, args=(k * 50,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert index.coverage().jobs == 200
