"""A fake Buildkite REST v2 API on loopback: builds, jobs, logs, pagination, rate limits.

Shapes come from the vendored docs examples in tests/data/buildkite/rest/ (a build
and a job are copies of those, edited per test). Every answer carries the
`RateLimit-*` and `RateLimit-User-*` headers; `limit_next` answers 429 with the
documented body; `Link` headers paginate page-based listings. Only Bearer tokens
are accepted, like api.buildkite.com.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

DATA = Path(__file__).parent / "data" / "buildkite"
BUILD_PATH = "/v2/organizations/{org}/pipelines/{pipeline}/builds"


def rest_example(name: str) -> Any:
    return json.loads((DATA / "rest" / name).read_text(encoding="utf-8"))["body"]


def make_job(job_id: str, name: str, *, state: str = "failed", exit_status: int | None = 1,
             org: str = "vllm", pipeline: str = "ci", number: int = 1, step_key: str = "step",
             started_at: str = "2026-08-04T14:40:00.000Z",
             finished_at: str = "2026-08-04T15:22:10.000Z", retries_count: int | None = None,
             soft_failed: bool = False) -> dict[str, Any]:
    """The docs' `get-job.200.json`, edited into the job a test needs (docs show no failures)."""
    job: dict[str, Any] = copy.deepcopy(rest_example("get-job.200.json"))
    api = f"https://api.buildkite.com/v2/organizations/{org}/pipelines/{pipeline}/builds/{number}"
    job.update(
        id=job_id, name=name, state=state, exit_status=exit_status, step_key=step_key,
        build_url=api, web_url=f"https://buildkite.com/{org}/{pipeline}/builds/{number}#{job_id}",
        log_url=f"{api}/jobs/{job_id}/log", raw_log_url=f"{api}/jobs/{job_id}/log.txt",
        started_at=started_at, finished_at=finished_at, retries_count=retries_count,
        soft_failed=soft_failed,
    )
    return job


def make_pipeline(org: str = "vllm", pipeline: str = "ci",
                  repository: str = "https://github.com/vllm-project/vllm.git") -> dict[str, Any]:
    data: dict[str, Any] = copy.deepcopy(rest_example("get-build.200.json")["pipeline"])
    data.update(
        url=f"https://api.buildkite.com/v2/organizations/{org}/pipelines/{pipeline}",
        name=pipeline, slug=pipeline, repository=repository,
    )
    return data


def make_build(number: int, jobs: list[dict[str, Any]], *, state: str = "failed",
               branch: str = "main", commit: str = "a" * 40, pr: int | None = None,
               org: str = "vllm", pipeline: str = "ci",
               created_at: str = "2026-08-04T14:39:00.000Z") -> dict[str, Any]:
    build: dict[str, Any] = copy.deepcopy(rest_example("get-build.200.json"))
    build.update(
        id=f"build-{number}", number=number, state=state, branch=branch, commit=commit,
        url=f"https://api.buildkite.com/v2/organizations/{org}/pipelines/{pipeline}/builds/{number}",
        web_url=f"https://buildkite.com/{org}/{pipeline}/builds/{number}", jobs=jobs,
        created_at=created_at, started_at=created_at, finished_at=jobs[-1]["finished_at"]
        if jobs else created_at, pipeline=make_pipeline(org, pipeline),
        pull_request={"id": str(pr), "base": "main", "repository": "vllm-project/vllm"}
        if pr else {},
    )
    return build


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, str]
    accept: str
    status: int


@dataclass
class FakeBuildkite:
    token: str = "bk-api-token"
    remaining: int = 200
    user_remaining: int = 50
    reset: int = 42
    builds: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    logs: dict[str, bytes] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    limit_next: int = 0  # answer this many upcoming requests with 429
    url: str = ""
    _runner: web.AppRunner | None = None

    def add_build(self, build: dict[str, Any], *, org: str = "vllm", pipeline: str = "ci",
                  logs: dict[str, str | bytes] | None = None) -> None:
        self.builds.setdefault((org, pipeline), []).append(build)
        for job_id, text in (logs or {}).items():
            self.logs[job_id] = text.encode() if isinstance(text, str) else text

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/v2/organizations/{org}/pipelines/{pipeline}/builds", self._list)
        app.router.add_get("/v2/organizations/{org}/pipelines/{pipeline}/builds/{number}",
                           self._build)
        app.router.add_get(
            "/v2/organizations/{org}/pipelines/{pipeline}/builds/{number}/jobs/{job}/{log}",
            self._log)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        return self.url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # -- plumbing -------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        return {
            "RateLimit-Scope": "rest", "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Limit": "200", "RateLimit-Reset": str(self.reset),
            "RateLimit-User-Scope": "rest_user",
            "RateLimit-User-Remaining": str(self.user_remaining),
            "RateLimit-User-Limit": "50", "RateLimit-User-Reset": str(self.reset),
        }

    def _reply(self, request: web.Request, status: int, body: Any = None, *,
               raw: bytes | None = None, extra: dict[str, str] | None = None) -> web.Response:
        self.calls.append(Call(request.method, request.path, dict(request.query),
                               request.headers.get("Accept", ""), status))
        headers = {**self._headers(), **(extra or {})}
        if raw is not None:
            return web.Response(status=status, body=raw, headers=headers,
                                content_type="text/plain")
        return web.json_response(body, status=status, headers=headers)

    def _gate(self, request: web.Request) -> web.Response | None:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return self._reply(request, 401, {"message": "Authentication required. Please "
                                              "supply a valid API Access Token"})
        if self.limit_next > 0:
            self.limit_next -= 1
            return self._reply(request, 429, rest_example("rate-limit-exceeded.429.json"))
        return None

    def _find(self, request: web.Request) -> dict[str, Any] | None:
        key = (request.match_info["org"], request.match_info["pipeline"])
        number = request.match_info["number"]
        return next((b for b in self.builds.get(key, []) if str(b["number"]) == number), None)

    @staticmethod
    def _jobs(build: dict[str, Any], query: Any) -> dict[str, Any]:
        if query.get("include_retried_jobs") == "true":
            return build
        return {**build, "jobs": [j for j in build["jobs"] if not j.get("retried")]}

    # -- routes ---------------------------------------------------------------------------
    async def _list(self, request: web.Request) -> web.Response:
        if (denied := self._gate(request)) is not None:
            return denied
        builds = sorted(self.builds.get((request.match_info["org"],
                                         request.match_info["pipeline"]), []),
                        key=lambda b: b["number"], reverse=True)
        since = request.query.get("created_from")
        if since:
            builds = [b for b in builds if b["created_at"] >= since.replace("Z", ".000Z")]
        page = int(request.query.get("page", "1"))
        per_page = min(int(request.query.get("per_page", "30")), 100)
        chunk = builds[(page - 1) * per_page: page * per_page]
        extra = {}
        if page * per_page < len(builds):
            query = {**request.query, "page": str(page + 1)}
            link = request.url.with_query(query)
            extra["Link"] = f'<{link}>; rel="next"'
        return self._reply(request, 200, [self._jobs(b, request.query) for b in chunk],
                           extra=extra)

    async def _build(self, request: web.Request) -> web.Response:
        if (denied := self._gate(request)) is not None:
            return denied
        build = self._find(request)
        if build is None:
            return self._reply(request, 404, {"message": "No build found"})
        return self._reply(request, 200, self._jobs(build, request.query))

    async def _log(self, request: web.Request) -> web.Response:
        if (denied := self._gate(request)) is not None:
            return denied
        kind = request.match_info["log"]
        job_id = request.match_info["job"]
        if kind not in {"log", "log.txt"} or job_id not in self.logs:
            return self._reply(request, 404, {"message": "No job found"})
        data = self.logs[job_id]
        if kind == "log.txt" or "text/plain" in request.headers.get("Accept", ""):
            return self._reply(request, 200, raw=data)
        return self._reply(request, 200, {"url": str(request.url), "size": len(data),
                                          "content": data.decode("utf-8", "replace"),
                                          "header_times": []})
