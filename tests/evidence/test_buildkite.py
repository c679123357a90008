"""Buildkite: webhook verification, the handler, the REST client and the backfill.

Real HTTP on loopback: the handler runs in an aiohttp server, logs come from the fake
Buildkite REST API (tests/fakebuildkite.py). Buildkite's docs show no failed job, so
failed jobs are the docs' `get-job.200.json` edited (see `make_job`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.evidence.buildkite import (
    BuildkiteWebhookHandler,
    WebhookRejected,
    buildkite_webhook_handler,
    job_record,
    repo_of,
    verify_request,
)
from bot.evidence.buildkite_backfill import backfill_buildkite
from bot.evidence.buildkite_rest import (
    BuildkiteClient,
    BuildkiteError,
    BuildkiteRateLimited,
    RateLimits,
    next_link,
)
from bot.evidence.index import JobQuery, SqliteFailureIndex
from tests.evidence.factories import NOW, ci_log, pcp_oom_log
from tests.fakebuildkite import DATA, FakeBuildkite, make_build, make_job, make_pipeline

VECTOR = json.loads((DATA / "webhooks" / "signature-test-vector.go-buildkite.json").read_text())
SECRET = "webhook-token-123"
OOM_JOB = "0190f5a0-0000-4000-8000-000000081913"


class Sleeps:
    """Records the waits the client asks for instead of waiting (no timed assertions)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


# -- verification -------------------------------------------------------------------------
def test_the_go_buildkite_signature_vector_verifies() -> None:
    request = VECTOR["request"]
    stamp = datetime.fromtimestamp(1642080837, UTC)
    verify_request(request["headers"], request["raw_body"].encode(),
                   secret=VECTOR["secret_token"], now=stamp + timedelta(seconds=30))


@pytest.mark.parametrize("change", ["body", "secret", "stale", "future", "format", "none"])
def test_bad_signatures_are_rejected(change: str) -> None:
    request = VECTOR["request"]
    headers = dict(request["headers"])
    body = request["raw_body"].encode()
    secret = VECTOR["secret_token"]
    now = datetime.fromtimestamp(1642080837, UTC)
    if change == "body":
        body = body.replace(b"ACME", b"EVIL")
    elif change == "secret":
        secret = "not-the-token"
    elif change == "stale":
        now += timedelta(minutes=6)
    elif change == "future":
        now -= timedelta(minutes=6)
    elif change == "format":
        headers["X-Buildkite-Signature"] = "invalid"
    else:
        del headers["X-Buildkite-Signature"]
    with pytest.raises(WebhookRejected):
        verify_request(headers, body, secret=secret, now=now)


def test_token_mode() -> None:
    verify_request({"X-Buildkite-Token": SECRET}, b"{}", secret=SECRET, now=NOW)
    with pytest.raises(WebhookRejected, match="does not match"):
        verify_request({"X-Buildkite-Token": SECRET + "x"}, b"{}", secret=SECRET, now=NOW)
    with pytest.raises(WebhookRejected, match="no Buildkite webhook token"):
        verify_request({"X-Buildkite-Token": ""}, b"{}", secret="", now=NOW)


# -- payload mapping ------------------------------------------------------------------------
def test_job_records_from_payloads() -> None:
    build = make_build(81913, [], pr=51015, branch="fix-pcp")
    pipeline = make_pipeline()
    record = job_record(make_job(OOM_JOB, "LM Eval PCP 4xB200", number=81913), build, pipeline)
    assert record is not None
    assert (record.provider, record.repo, record.pipeline, record.run_id) == (
        "buildkite", "vllm-project/vllm", "ci", "81913")
    assert (record.conclusion, record.pr_number, record.branch) == ("failure", 51015, "fix-pcp")
    assert record.url == f"https://buildkite.com/vllm/ci/builds/81913#{OOM_JOB}"
    soft = job_record(make_job("s", "x", soft_failed=True), build, pipeline)
    assert soft is not None and soft.conclusion == "soft-failed"
    lost = job_record(make_job("l", "x", exit_status=-1), build, pipeline)
    assert lost is not None and lost.conclusion == "infra"
    retry = job_record(make_job("r", "x", retries_count=2, state="passed"), build, pipeline)
    assert retry is not None and (retry.attempt, retry.conclusion) == (3, "success")
    assert job_record({**make_job("w", "x"), "type": "waiter"}, build, pipeline) is None
    assert repo_of({"repository": "git@github.com:my-great-org/my-pipeline"}) == (
        "my-great-org/my-pipeline")


# -- the handler over HTTP ------------------------------------------------------------------
@asynccontextmanager
async def _world(tmp_path: Path, *, build_jobs: bool = False, max_body_bytes: int = 5 << 20
                 ) -> AsyncIterator[tuple[str, FakeBuildkite, SqliteFailureIndex,
                                          BuildkiteWebhookHandler]]:
    fake = FakeBuildkite()
    await fake.start()
    index = SqliteFailureIndex(tmp_path / "ci.db")
    async with aiohttp.ClientSession() as session:
        client = BuildkiteClient(session, fake.token, base_url=fake.url, sleep=Sleeps())
        handler = buildkite_webhook_handler(
            SECRET, index, client.log_stream_for, lambda: NOW,
            fetch_build_jobs=client.build_jobs if build_jobs else None,
            max_body_bytes=max_body_bytes)
        app = web.Application()
        app.router.add_post("/webhooks/buildkite", handler.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        try:
            yield f"http://{host}:{port}/webhooks/buildkite", fake, index, handler
        finally:
            await handler.drain()
            await runner.cleanup()
            index.close()
            await fake.close()


def _job_finished(job: dict[str, Any], build: dict[str, Any]) -> bytes:
    webhook_build = {k: v for k, v in build.items() if k not in {"jobs", "pipeline"}}
    return json.dumps({"event": "job.finished", "job": job, "build": webhook_build,
                       "pipeline": make_pipeline(),
                       "sender": {"id": "x", "name": "Buildkite"}}).encode()


def _oom_world(fake: FakeBuildkite) -> tuple[dict[str, Any], dict[str, Any]]:
    job = make_job(OOM_JOB, "LM Eval PCP 4xB200", number=81913)
    build = make_build(81913, [job])
    fake.add_build(build, logs={OOM_JOB: pcp_oom_log()})
    return job, build


def _run(coro: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(coro())  # type: ignore[arg-type]


@pytest.mark.parametrize("headers", [
    {"X-Buildkite-Token": "wrong"},
    {"X-Buildkite-Signature": "timestamp=1,signature=" + "0" * 64},
    {},
])
def test_bad_token_or_signature_stores_nothing(tmp_path: Path, headers: dict[str, str]) -> None:
    async def scenario() -> None:
        async with _world(tmp_path) as (url, fake, index, handler):
            job, build = _oom_world(fake)
            async with aiohttp.ClientSession() as http, http.post(
                url, data=_job_finished(job, build),
                headers={"X-Buildkite-Event": "job.finished", **headers},
            ) as response:
                assert response.status == 401
            await handler.drain()
            assert index.jobs(JobQuery()) == []
            assert index.coverage().jobs == 0 and not index.has_run("buildkite", "81913")
            assert fake.calls == []  # no log was even fetched

    _run(scenario)


def test_job_finished_is_indexed_with_its_root_cause(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _world(tmp_path) as (url, fake, index, handler):
            job, build = _oom_world(fake)
            body = _job_finished(job, build)
            stamp = str(int(NOW.timestamp()))
            digest = hmac.new(SECRET.encode(), f"{stamp}.".encode() + body,
                              hashlib.sha256).hexdigest()
            async with aiohttp.ClientSession() as http, http.post(url, data=body, headers={
                "X-Buildkite-Event": "job.finished",
                "X-Buildkite-Signature": f"timestamp={stamp},signature={digest}",
            }) as response:
                assert response.status == 202
            await handler.drain()
            (record,) = index.jobs(JobQuery())
            assert record.job_name == "LM Eval PCP 4xB200" and record.category == "cuda-oom"
            assert "Server failed to start within 1200 seconds" in (record.surface or "")
            assert any("GLM-5.2-NVFP4-TP1-PCP4-EP" in m for m in record.mentions)
            # The payload's raw_log_url points at api.buildkite.com: rebuilt on our API origin.
            (call,) = fake.calls
            assert call.path.endswith(f"/builds/81913/jobs/{OOM_JOB}/log")
            assert call.accept == "text/plain"
            assert handler.processed == 1 and handler.failed == 0

    _run(scenario)


def test_large_signed_bodies_and_redeliveries(tmp_path: Path) -> None:
    """A body that arrives in many TCP chunks still verifies; a redelivery reads no log."""

    async def scenario() -> None:
        async with _world(tmp_path, max_body_bytes=600_000) as (url, fake, index, handler):
            job, build = _oom_world(fake)
            payload = json.loads(_job_finished(job, build))
            payload["build"]["message"] = "x" * 400_000
            body = json.dumps(payload).encode()
            stamp = str(int(NOW.timestamp()))
            digest = hmac.new(SECRET.encode(), f"{stamp}.".encode() + body,
                              hashlib.sha256).hexdigest()
            headers = {"X-Buildkite-Event": "job.finished",
                       "X-Buildkite-Signature": f"timestamp={stamp},signature={digest}"}
            async with aiohttp.ClientSession() as http:
                for _ in range(2):
                    async with http.post(url, data=body, headers=headers) as response:
                        assert response.status == 202
                    await handler.drain()
                too_big = b"{" + b" " * 700_000 + b"}"
                async with http.post(url, data=too_big, headers={
                        "X-Buildkite-Token": SECRET}) as response:
                    assert response.status == 413

                async def chunked() -> AsyncIterator[bytes]:  # no Content-Length
                    for _ in range(12):
                        yield b" " * 64 * 1024

                async with http.post(url, data=chunked(), headers={
                        "X-Buildkite-Token": SECRET}) as response:
                    assert response.status == 413
            assert index.coverage().jobs == 1
            assert len(fake.calls) == 1

    _run(scenario)


def test_ping_and_ignored_events(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _world(tmp_path) as (url, _fake, index, _handler):
            ping = json.loads((DATA / "webhooks" / "ping.json").read_text())["body"]
            async with aiohttp.ClientSession() as http:
                async with http.post(url, json=ping, headers={"X-Buildkite-Token": SECRET,
                                                              "X-Buildkite-Event": "ping"}) as r:
                    assert r.status == 200
                async with http.post(url, json={"event": "agent.connected"},
                                     headers={"X-Buildkite-Token": SECRET}) as r:
                    assert r.status == 202 and (await r.json())["ignored"] == "agent.connected"
                async with http.post(url, data=b"not json",
                                     headers={"X-Buildkite-Token": SECRET}) as r:
                    assert r.status == 400
            assert index.coverage().jobs == 0

    _run(scenario)


def test_build_finished_fetches_the_jobs_it_missed(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _world(tmp_path, build_jobs=True) as (url, fake, index, handler):
            failed = make_job(OOM_JOB, "LM Eval PCP 4xB200", number=81913)
            passed = make_job("p-1", "Basic Correctness", state="passed", exit_status=0,
                              number=81913)
            build = make_build(81913, [failed, passed])
            fake.add_build(build, logs={OOM_JOB: pcp_oom_log()})
            body = {"event": "build.finished", "pipeline": make_pipeline(),
                    "build": {k: v for k, v in build.items() if k not in {"jobs", "pipeline"}}}
            async with aiohttp.ClientSession() as http, http.post(
                url, json=body, headers={"X-Buildkite-Token": SECRET}) as r:
                assert r.status == 202
            await handler.drain()
            jobs = {j.job_name: j for j in index.jobs(JobQuery())}
            assert jobs["LM Eval PCP 4xB200"].category == "cuda-oom"
            assert jobs["Basic Correctness"].conclusion == "success"
            assert index.run_complete("buildkite", "81913")

    _run(scenario)


# -- the REST client --------------------------------------------------------------------------
def test_rate_limits_are_honoured(tmp_path: Path) -> None:
    async def scenario() -> None:
        fake = FakeBuildkite(limit_next=1)
        await fake.start()
        sleeps = Sleeps()
        try:
            async with aiohttp.ClientSession() as session:
                client = BuildkiteClient(session, fake.token, base_url=fake.url, sleep=sleeps)
                fake.add_build(make_build(1, [make_job("j", "x")]))
                build = await client.build("vllm", "ci", 1)
                assert build["number"] == 1
                assert sleeps.waits == [42.0]  # the 429 body's `reset`
                fake.user_remaining = 0  # the next call must wait for the user window
                await client.build("vllm", "ci", 1)
                await client.build("vllm", "ci", 1)
                assert sleeps.waits == [42.0, 42.0]
                fake.limit_next, fake.reset = 1, 3600
                with pytest.raises(BuildkiteRateLimited):
                    await BuildkiteClient(session, fake.token, base_url=fake.url,
                                          sleep=sleeps).build("vllm", "ci", 1)
                with pytest.raises(BuildkiteError, match="rejected BUILDKITE_API_TOKEN"):
                    await BuildkiteClient(session, "bad", base_url=fake.url).build("vllm", "ci", 1)
                with pytest.raises(BuildkiteError, match="refusing to send the API token"):
                    await client.get_json("https://evil.example/v2/x")
        finally:
            await fake.close()

    _run(scenario)


def test_rate_limit_header_parsing_and_links() -> None:
    headers = json.loads((DATA / "rest" / "rate-limit-headers.json").read_text())["headers"]
    assert RateLimits.from_headers(headers) == RateLimits(35, 42.0)
    assert RateLimits.from_headers({}) == RateLimits(None, None)
    pagination = json.loads((DATA / "rest" / "pagination.json").read_text())["page_based"]
    assert next_link(pagination["docs_example_Link_header"]).endswith("page=3")  # type: ignore[union-attr]
    assert next_link(pagination["go_buildkite_test_Link_header"]) == (
        "https://api.buildkite.com/?page=4")
    assert next_link(None) is None


# -- backfill ---------------------------------------------------------------------------------
def test_backfill_pages_resumes_and_skips_finished_builds(tmp_path: Path) -> None:
    async def scenario() -> None:
        fake = FakeBuildkite()
        await fake.start()
        index = SqliteFailureIndex(tmp_path / "ci.db")
        nccl = ci_log("vllm-issue-42183-nccl-unhandled-cuda-error.log")
        for number in range(1, 131):
            created = (NOW - timedelta(hours=number)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            failed = make_job(f"f{number}", "Distributed Tests", number=number,
                              finished_at=created)
            passed = make_job(f"p{number}", "Basic", state="passed", exit_status=0,
                              number=number, finished_at=created)
            fake.add_build(make_build(number, [failed, passed], created_at=created),
                           logs={f"f{number}": nccl})
        running = make_build(131, [make_job("r", "Slow", state="running", number=131)],
                             state="running", created_at="2026-08-05T05:30:00.000Z")
        fake.add_build(running)
        messages: list[str] = []
        try:
            async with aiohttp.ClientSession() as session:
                client = BuildkiteClient(session, fake.token, base_url=fake.url, sleep=Sleeps())
                stats = await backfill_buildkite(client, index, "vllm", "ci", now=NOW, days=14,
                                                 progress=messages.append)
                assert (stats.builds_seen, stats.failures, stats.logs) == (131, 130, 130)
                lists = [c for c in fake.calls if c.path.endswith("/builds")]
                assert len(lists) == 2 and lists[1].query["page"] == "2"
                assert index.coverage().jobs == 260
                assert index.jobs(JobQuery(limit=1, conclusions=("failure",)))[0].category == (
                    "nccl-error")
                assert messages[-1].startswith("vllm/ci: 131 builds")
                # The running build holds the cursor back; finished builds are skipped.
                assert index.get_cursor("buildkite:vllm/ci") == "2026-08-05T05:30:00Z"
                fake.calls.clear()
                again = await backfill_buildkite(client, index, "vllm", "ci", now=NOW, days=14)
                assert again.builds_seen == 1 and again.logs == 0
                assert [c.path for c in fake.calls] == [
                    "/v2/organizations/vllm/pipelines/ci/builds"]
        finally:
            index.close()
            await fake.close()

    _run(scenario)
