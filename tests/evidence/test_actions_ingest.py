"""GitHub Actions ingestion against the fake GitHub: webhooks (async and sync) and backfill.

The `workflow_job` payloads are the vendored octokit examples; only their ids, job name
and branch are pointed at the objects seeded in the fake (its ids are its own).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp

from bot.evidence.actions import (
    fetch_job_log,
    ingest_workflow_job,
    ingest_workflow_job_sync,
    ingest_workflow_run,
)
from bot.evidence.actions_backfill import backfill_github
from bot.evidence.index import JobQuery, SqliteFailureIndex
from bot.github.drive_async import STREAM_CHUNK, AsyncDriver, ResponseStream
from bot.github.drive_sync import SyncDriver
from bot.github.retry import RetryPolicy
from tests.evidence.factories import NOW, ci_log
from tests.fakegithub import FakeGitHub, Job, WorkflowRun, load_payload, running_fake_github

REPO = "Codertocat/Hello-World"
TOKEN = "ghp_evidence_tests"
STEPS = [
    {"name": "Set up job", "status": "completed", "conclusion": "success", "number": 1},
    {"name": "Run tests", "status": "completed", "conclusion": "failure", "number": 2},
]
IMPORT_LOG = "pytorch-gha-importerror-missing-so.log"


def _seed(fake: FakeGitHub) -> tuple[WorkflowRun, Job, Job]:
    fake.add_personal_token(TOKEN, "ci-indexer")
    run = fake.add_workflow_run(
        REPO, head_sha="3484a3fb816e0859fd6e1cea078d76385ff50625", head_branch="fix-ci",
        name="CodeQL", path=".github/workflows/codeql.yml", pull_requests=[], created_at=NOW,
        updated_at=NOW)
    fake.add_pull(REPO, 7, head_sha=run.head_sha, head_ref="fix-ci")
    run.pull_requests = [7]
    failed = fake.add_job(run.id, name="linters", log=ci_log(IMPORT_LOG).decode(),
                          steps=STEPS, started_at=NOW, completed_at=NOW)
    passed = fake.add_job(run.id, name="build", conclusion="success", log="all good\n",
                          started_at=NOW, completed_at=NOW)
    return run, failed, passed


def _payload(name: str, job: Job, **changes: Any) -> dict[str, Any]:
    payload = copy.deepcopy(load_payload(name))
    payload["workflow_job"].update(id=job.id, run_id=job.run_id, name=job.name,
                                   head_branch="fix-ci", **changes)
    return payload


@asynccontextmanager
async def _driver(fake: FakeGitHub) -> AsyncIterator[AsyncDriver]:
    async with aiohttp.ClientSession() as session:
        yield AsyncDriver(session, TOKEN, base_url=fake.url, write_spacing=0,
                          policy=RetryPolicy(max_attempts=2, backoff_base=0.01))


def test_a_failed_job_is_indexed_with_its_root_cause(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with FakeGitHub() as fake, _driver(fake) as driver:
            run, failed, passed = _seed(fake)
            index = SqliteFailureIndex(tmp_path / "ci.db")
            payload = _payload("workflow_job.completed.failure.with-organization", failed)
            record = await ingest_workflow_job(payload, driver, index, NOW)
            assert record is not None and record.category == "import-error"
            (stored,) = index.jobs(JobQuery())
            assert stored == record.__class__(**{**record.__dict__, "ingested_at": NOW})
            assert stored.step == "Run yarn run format-check"  # the payload's failed step
            assert stored.pipeline == "CodeQL"
            assert stored.workflow_path == ".github/workflows/codeql.yml"
            assert stored.pr_number == 7 and stored.branch == "fix-ci"
            assert stored.run_url == f"https://github.com/{REPO}/actions/runs/{run.id}"
            assert index.has_run("github-actions", str(run.id))
            log_calls = fake.calls_to("actions/download-job-logs-for-workflow-run")
            assert [c.status for c in log_calls] == [302]
            (blob,) = fake.calls_to("fake/job-log-blob")
            assert "authorization" not in blob.headers  # the token stays with GitHub
            # A passing job of the same run: recorded, no log, no second run lookup.
            ok = _payload("workflow_job.completed.success.with-organization", passed)
            assert (await ingest_workflow_job(ok, driver, index, NOW)) is not None
            assert fake.count("actions/list-workflow-runs-for-repo") == 1
            assert len(fake.calls_to("actions/download-job-logs-for-workflow-run")) == 1
            assert {j.conclusion for j in index.jobs(JobQuery())} == {"failure", "success"}
            assert fake.violations == []
            index.close()

    asyncio.run(scenario())


def test_expired_logs_and_unfinished_jobs(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with FakeGitHub() as fake, _driver(fake) as driver:
            _run, failed, _passed = _seed(fake)
            failed.log = None  # GitHub answers 404 once logs expire
            index = SqliteFailureIndex(tmp_path / "ci.db")
            payload = _payload("workflow_job.completed.failure.with-organization", failed)
            record = await ingest_workflow_job(payload, driver, index, NOW)
            assert record is not None and record.category is None
            assert record.log_note == "log unavailable (expired or deleted)"
            for name in ("workflow_job.queued", "workflow_job.in_progress"):
                assert await ingest_workflow_job(_payload(name, failed), driver, index, NOW) is None
            assert index.coverage().jobs == 1
            index.close()

    asyncio.run(scenario())


def test_sync_driver_and_workflow_run_payloads(tmp_path: Path) -> None:
    index = SqliteFailureIndex(tmp_path / "ci.db")
    with running_fake_github() as fake:
        run, failed, _passed = _seed(fake)
        run_payload = copy.deepcopy(load_payload("workflow_run.completed"))
        run_payload["workflow_run"].update(id=run.id, path=run.path, pull_requests=[
            {"number": 7, "id": 1, "url": "x", "head": {}, "base": {}}])
        run_payload["repository"]["full_name"] = REPO
        ingest_workflow_run(run_payload, index, NOW)
        driver = SyncDriver(TOKEN, base_url=fake.url, seconds_between_requests=0)
        payload = _payload("workflow_job.completed.failure.with-organization", failed)
        record = ingest_workflow_job_sync(payload, driver, index, NOW)
        driver.close()
        assert record is not None and record.category == "import-error"
        # The redirect to the log blob is followed without our token.
        blob_calls = [c for c in fake.calls if c.path.startswith("/_fake/blobs/")]
        assert blob_calls and all("authorization" not in c.headers for c in blob_calls)
        # The run came from the workflow_run delivery: no lookup was needed.
        assert fake.count("actions/list-workflow-runs-for-repo") == 0
        (stored,) = index.jobs(JobQuery())
        assert stored.pr_number == 7
    index.close()


def test_backfill_indexes_resumes_and_marks_flaky_retries(tmp_path: Path) -> None:
    index = SqliteFailureIndex(tmp_path / "ci.db")
    with running_fake_github() as fake:
        fake.add_personal_token(TOKEN, "ci-indexer")
        oom = ci_log("pytorch-gha-cuda-oom-fp64-cast.log").decode()
        runs = []
        for day in range(3):
            created = NOW - timedelta(days=day, hours=2)
            run = fake.add_workflow_run(REPO, head_sha=f"{day:040d}", name="PR Test (Xeon)",
                                        path=".github/workflows/pr-test-xeon.yml",
                                        created_at=created, updated_at=created,
                                        run_attempt=2)
            fake.add_job(run.id, name="unit-test (a)", log=oom, steps=STEPS, run_attempt=1,
                         started_at=created, completed_at=created)
            fake.add_job(run.id, name="unit-test (a)", conclusion="success", log="ok\n",
                         run_attempt=2, started_at=created, completed_at=created)
            runs.append(run)
        busy = fake.add_workflow_run(REPO, head_sha="f" * 40, name="PR Test (Xeon)",
                                     status="in_progress", conclusion=None,
                                     created_at=NOW - timedelta(hours=1),
                                     updated_at=NOW - timedelta(hours=1))
        fake.add_workflow_run(REPO, head_sha="e" * 40, name="Old",
                              created_at=NOW - timedelta(days=30))
        driver = SyncDriver(TOKEN, base_url=fake.url, seconds_between_requests=0)
        messages: list[str] = []
        stats = backfill_github(driver, index, REPO, now=NOW, days=7, progress=messages.append)
        assert (stats.runs_seen, stats.jobs, stats.failures, stats.logs) == (4, 6, 3, 3)
        assert stats.pages == 1 and messages
        jobs = index.jobs(JobQuery(limit=50))
        assert {(j.attempt, j.conclusion) for j in jobs} == {(1, "failure"), (2, "success")}
        assert all(j.workflow_path == ".github/workflows/pr-test-xeon.yml" for j in jobs)
        assert {j.category for j in jobs if j.conclusion == "failure"} == {"cuda-oom"}
        assert all(index.run_complete("github-actions", str(r.id)) for r in runs)
        assert not index.run_complete("github-actions", str(busy.id))
        assert index.get_cursor("github-actions:codertocat/hello-world:*") == (
            "2026-08-05T05:00:00Z")
        assert fake.violations == []

        # Again: only the days since the cursor are listed, finished runs are skipped.
        before = len(fake.calls)
        again = backfill_github(driver, index, REPO, now=NOW + timedelta(hours=1), days=7)
        new_calls = [c.operation_id for c in fake.calls[before:]]
        assert again.runs_seen == 1 and again.runs_skipped == 0
        assert new_calls.count("actions/list-jobs-for-workflow-run") == 1
        assert "actions/download-job-logs-for-workflow-run" not in new_calls
        driver.close()
    index.close()


def test_backfill_of_one_workflow(tmp_path: Path) -> None:
    index = SqliteFailureIndex(tmp_path / "ci.db")
    with running_fake_github() as fake:
        fake.add_personal_token(TOKEN, "ci-indexer")
        for path in (".github/workflows/a.yml", ".github/workflows/b.yml"):
            run = fake.add_workflow_run(REPO, head_sha="1" * 40, path=path, name=path,
                                        created_at=NOW - timedelta(hours=3))
            fake.add_job(run.id, name="job", conclusion="success", started_at=NOW,
                         completed_at=NOW)
        driver = SyncDriver(TOKEN, base_url=fake.url, seconds_between_requests=0)
        stats = backfill_github(driver, index, REPO, now=NOW, days=1, workflow="b.yml")
        driver.close()
        assert stats.runs_seen == 1
        assert [j.pipeline for j in index.jobs(JobQuery())] == [".github/workflows/b.yml"]
        assert fake.count("actions/list-workflow-runs") == 1
    index.close()


def test_job_logs_are_handed_over_as_streams_not_bodies(tmp_path: Path) -> None:
    # 12 MB of noise before the failure: read whole, it would sit in memory at once.
    big = "INFO step output line, nothing failed here\n" * 300_000 + ci_log(IMPORT_LOG).decode()

    async def scenario() -> None:
        async with FakeGitHub() as fake, _driver(fake) as driver:
            _run, failed, _passed = _seed(fake)
            failed.log = big
            result = await driver.run(fetch_job_log(REPO, str(failed.id)))
            assert isinstance(result.data, ResponseStream)
            sizes = [len(chunk) async for chunk in result.data]
            assert sum(sizes) == len(big.encode()) and max(sizes) <= STREAM_CHUNK
            index = SqliteFailureIndex(tmp_path / "index.db")
            payload = _payload("workflow_job.completed.failure.with-organization", failed)
            record = await ingest_workflow_job(payload, driver, index, NOW)
            assert record is not None and record.category == "import-error"
            assert record.log_note is None  # nothing capped, nothing skipped
            index.close()

    asyncio.run(scenario())

    with running_fake_github() as fake:
        _run, failed, _passed = _seed(fake)
        failed.log = big
        sync = SyncDriver(TOKEN, base_url=fake.url, seconds_between_requests=0)
        body = sync.run(fetch_job_log(REPO, str(failed.id))).data
        assert hasattr(body, "read") and not isinstance(body, bytes)
        assert len(body.read(1 << 16)) == 1 << 16
        body.close()
        sync.close()
