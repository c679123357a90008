"""FakeGitHub: the aiohttp application, its request pipeline and its test-facing knobs."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from . import graphql_api, spec
from .auth import Principal, check_permission, resolve_token, split_authorization, verify_app_jwt
from .context import Ctx, Handler
from .errors import DEFAULT_DOCS_URL, ApiError, RecordedCall, Reply, Violation
from .handlers_apps import HANDLERS as APP_HANDLERS
from .handlers_apps import submit_manifest
from .handlers_ci import HANDLERS as CI_HANDLERS
from .handlers_ci import LOG_BLOB_PREFIX
from .handlers_issues import HANDLERS as ISSUE_HANDLERS
from .handlers_pulls import HANDLERS as PULL_HANDLERS
from .handlers_repo import HANDLERS as REPO_HANDLERS
from .seeding import Seeding
from .shapes import Shapes
from .state import Repo, State
from .traffic import Budget, Fault, default_fault_body, link_header, take_fault

HANDLERS: dict[str, Handler] = {**PULL_HANDLERS, **ISSUE_HANDLERS, **REPO_HANDLERS, **CI_HANDLERS,
                                **APP_HANDLERS}
TOKEN_OPERATION = "apps/create-installation-access-token"
JWT_OPERATIONS = {TOKEN_OPERATION, "apps/get-authenticated"}  # the App's JWT, no token
GRAPHQL_PATH = "/graphql"
GRAPHQL_OPERATION = "graphql"
# Called without credentials on github.com: the temporary code is the credential.
ANONYMOUS_OPERATIONS = {"apps/create-from-manifest"}
# github.com's web form of the manifest flow (not the API): served on the same host.
_MANIFEST_FORM = re.compile(r"^/(?:organizations/([^/]+)/)?settings/apps/new$")
_REPOSITORIES_PATH = re.compile(r"^/repositories/(\d+)(/.*)?$")
_REPOS_PATH = re.compile(r"^/repos/([^/]+)/([^/]+)(/.*)?$")


class FakeGitHub(Seeding):
    """A stateful, spec-validating stand-in for api.github.com on 127.0.0.1."""

    def __init__(self, *, core_limit: int = 5000, search_limit: int = 30,
                 graphql_limit: int = 5000,
                 check_responses: bool = False, repository_id_links: bool = True) -> None:
        self.state = State()
        self.violations: list[Violation] = []
        self.calls: list[RecordedCall] = []
        self.response_problems: list[str] = []
        self.faults: list[Fault] = []
        self.check_responses = check_responses
        # github.com's next-links switch to /repositories/{id}/…; clients must follow, not build.
        self.repository_id_links = repository_id_links
        self.exhausted_status = 403
        self.time_offset = timedelta(0)
        reset = self.now() + timedelta(hours=1)
        self.budgets = {
            "core": Budget("core", core_limit, core_limit, reset),
            "search": Budget("search", search_limit, search_limit, reset),
            "graphql": Budget("graphql", graphql_limit, graphql_limit, reset),
        }
        self.url = ""
        self.app = web.Application(client_max_size=200 * 1024 * 1024)
        self.app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner: web.AppRunner | None = None

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self) -> str:
        self._runner = web.AppRunner(
            self.app, access_log=None, handler_cancellation=True, shutdown_timeout=0.5
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        return self.url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeGitHub:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- knobs -------------------------------------------------------------------------
    def now(self) -> datetime:
        return datetime.now(UTC).replace(microsecond=0) + self.time_offset

    def advance(self, seconds: float) -> None:
        """Move the fake's clock (token expiry, log links, rate-limit reset) forward."""
        self.time_offset += timedelta(seconds=seconds)

    def inject(self, method: str, path_regex: str, status: int = 502, *,
               headers: dict[str, str] | None = None, body: Any = None,
               times: int | None = 1) -> Fault:
        """Answer matching requests with `status` before any processing (`times=None`: forever)."""
        fault = Fault(method.upper(), re.compile(path_regex), times, status, dict(headers or {}),
                      body if body is not None else default_fault_body(status))
        self.faults.append(fault)
        return fault

    def inject_secondary_rate_limit(self, method: str, path_regex: str, *,
                                    retry_after: int = 1, status: int = 403,
                                    times: int | None = 1) -> Fault:
        return self.inject(method, path_regex, status, times=times,
                           headers={"Retry-After": str(retry_after)})

    def inject_delay(self, method: str, path_regex: str, seconds: float, *,
                     times: int | None = 1, after: bool = False, skip: int = 0) -> Fault:
        """Hold matching requests `seconds` before handling them, or (`after`) handle
        them at once and hold the answer: a kill meanwhile leaves the write landed.
        `skip`: let that many matching requests through first."""
        fault = Fault(method.upper(), re.compile(path_regex), times, delay=seconds, after=after,
                      skip=skip)
        self.faults.append(fault)
        return fault

    def set_rate_limit(self, resource: str = "core", *, limit: int | None = None,
                       remaining: int | None = None, reset_in: float | None = None) -> Budget:
        budget = self.budgets[resource]
        budget.limit = budget.limit if limit is None else limit
        budget.remaining = budget.limit if remaining is None else remaining
        if reset_in is not None:
            budget.reset_at = self.now() + timedelta(seconds=reset_in)
        return budget

    def count(self, operation_id: str) -> int:
        return sum(1 for call in self.calls if call.operation_id == operation_id)

    def calls_to(self, operation_id: str) -> list[RecordedCall]:
        return [call for call in self.calls if call.operation_id == operation_id]

    def writes(self) -> list[RecordedCall]:
        """Mutating calls, except installation-token minting (it changes nothing visible)."""
        return [c for c in self.calls if c.is_write and c.operation_id != TOKEN_OPERATION]

    # -- pipeline ----------------------------------------------------------------------
    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        method, path = request.method, request.path
        operation: spec.Operation | None = None
        # Set once the caller is known, so that failed requests spend budget too.
        spent: list[Budget] = []
        try:
            if path.startswith(LOG_BLOB_PREFIX):
                reply = self._serve_log_blob(path.removeprefix(LOG_BLOB_PREFIX))
            elif method == "POST" and (form := _MANIFEST_FORM.match(path)):
                # `state` rides on the form's URL, as github.com documents; the manifest
                # in the body.
                fields = {**request.query, **{k: str(v) for k, v in (await request.post()).items()}}
                location = submit_manifest(self.state, self.now(), fields,
                                           form[1] or "octocat")
                reply = Reply(status=302, headers={"Location": location}, raw=b"")
            elif path == GRAPHQL_PATH:
                reply = await self._graphql(request, raw, spent)
            else:
                canonical = self._canonical_path(path)
                operation, params = spec.find_operation(method, canonical)
                if operation is None:
                    raise ApiError(404, "Not Found", violation="unknown-route")
                paths = (path, canonical)
                reply = await self._handle(request, operation, params, raw, spent, paths)
        except ApiError as error:
            docs = operation.docs_url if operation else DEFAULT_DOCS_URL
            reply = Reply(status=error.status, json=error.body(docs), headers=error.headers)
            if error.violation:
                operation_id = operation.operation_id if operation else None
                self.violations.append(
                    Violation(method, path, operation_id, error.violation, error.message)
                )
        response = self._finish(request, operation, reply, spent[0] if spent else None)
        self._record(request, raw, operation, response.status, reply)
        return response

    async def _injected(self, method: str, paths: tuple[str, ...]) -> Reply | None:
        """Every request's fault preamble: an injected delay, then an injected reply."""
        delay = take_fault(self.faults, method, paths, delays=True)
        if delay is not None:
            await asyncio.sleep(delay.delay)
        fault = take_fault(self.faults, method, paths, delays=False)
        return None if fault is None else self._fault_reply(fault)

    async def _handle(self, request: web.Request, operation: spec.Operation,
                      params: dict[str, str], raw: bytes, spent: list[Budget],
                      paths: tuple[str, ...]) -> Reply:
        injected = await self._injected(request.method, paths)
        if injected is not None:
            return injected
        principal = self._authenticate(operation.operation_id, request)
        resource = "search" if operation.path_template.startswith("/search/") else "core"
        if principal.kind != "app":
            budget = self.budgets[resource]
            budget.refresh(self.now())
            spent.append(budget)
            if budget.remaining <= 0:
                raise ApiError(self.exhausted_status,
                               f"API rate limit exceeded for {principal.rate_limit_key}.")
        query, body = self._validate(operation, params, request, raw)
        repo = self._visible_repo(principal, params)
        if operation.operation_id not in {*JWT_OPERATIONS, *ANONYMOUS_OPERATIONS}:
            check_permission(principal, operation.operation_id)
        ctx = Ctx(self.state, Shapes(self.url, self.state), self.now(), self.url, principal,
                  operation.operation_id, params, query, body,
                  request.headers.get("Accept", ""), repo)
        reply = HANDLERS[operation.operation_id](ctx)
        stall = take_fault(self.faults, request.method, paths, delays=True, after=True)
        if stall is not None:
            await asyncio.sleep(stall.delay)
        return reply

    async def _graphql(self, request: web.Request, raw: bytes, spent: list[Budget]) -> Reply:
        injected = await self._injected(request.method, (GRAPHQL_PATH,))
        if injected is not None:
            return injected
        if request.method != "POST":
            raise ApiError(404, "Not Found", violation="unknown-route")
        if split_authorization(request.headers.get("Authorization")) is None:
            raise ApiError(401, "This endpoint requires you to be authenticated.")
        principal = self._authenticate(GRAPHQL_OPERATION, request)
        budget = self.budgets["graphql"]
        budget.refresh(self.now())
        spent.append(budget)
        if budget.remaining <= 0:
            return Reply(json={"errors": [{"type": "RATE_LIMITED", "message":
                               f"API rate limit exceeded for {principal.rate_limit_key}."}]})
        try:
            body = json.loads(raw) if raw.strip() else None
        except ValueError as exc:
            raise ApiError(400, "Problems parsing JSON", violation="body-json") from exc

        def visible(full_name: str) -> Repo | None:
            repo = next((r for n, r in self.state.repos.items()
                         if n.lower() == full_name.lower()), None)
            return repo if repo and principal.can_see(self.state, repo.full_name) else None

        try:
            check_permission(principal, "repos/get-content")
            readable = True
        except ApiError:
            readable = False
        return Reply(json=graphql_api.execute(body, graphql_api.Resolver(
            self.state, visible, readable)))

    def _canonical_path(self, path: str) -> str:
        found = _REPOSITORIES_PATH.match(path)
        if found is None:
            return path
        repo = self.state.repo_by_id(int(found[1]))
        if repo is None:
            raise ApiError(404, "Not Found")
        return f"/repos/{repo.full_name}{found[2] or ''}"

    def _authenticate(self, operation_id: str, request: web.Request) -> Principal:
        parts = split_authorization(request.headers.get("Authorization"))
        if operation_id in ANONYMOUS_OPERATIONS:
            return Principal("anonymous", "anonymous", "User")
        if operation_id in JWT_OPERATIONS:
            if parts is None or parts[0] != "bearer":
                raise ApiError(401, "A JSON web token could not be decoded")
            verify_app_jwt(parts[1], self.state.app, self.now())
            assert self.state.app is not None
            return Principal("app", self.state.app.slug, "Bot")
        if parts is None:
            raise ApiError(401, "Requires authentication")
        if parts[0] not in {"token", "bearer"}:
            raise ApiError(401, "Bad credentials")
        return resolve_token(self.state, parts[1], self.now())

    def _validate(self, operation: spec.Operation, params: dict[str, str],
                  request: web.Request, raw: bytes) -> tuple[dict[str, Any], Any]:
        problems = spec.validate_path_params(operation, params)
        query, query_problems = spec.validate_query(operation, request.query.items())
        try:
            body, body_problems = spec.validate_body(operation, raw)
        except ValueError as exc:
            raise ApiError(400, "Problems parsing JSON", violation="body-json") from exc
        for kind, found in (("path-param", problems), ("query-param", query_problems),
                            ("body-schema", body_problems)):
            if found:
                raise ApiError(422, "Invalid request.\n\n" + "\n".join(found), violation=kind)
        return query, body

    def _visible_repo(self, principal: Principal, params: dict[str, str]) -> Repo | None:
        if "owner" not in params:
            return None
        wanted = f"{params['owner']}/{params['repo']}".lower()
        repo = next((r for n, r in self.state.repos.items() if n.lower() == wanted), None)
        # A token that cannot see a repository gets the same 404 as for a missing one.
        if repo is None or not principal.can_see(self.state, repo.full_name):
            raise ApiError(404, "Not Found")
        return repo

    def _serve_log_blob(self, token: str) -> Reply:
        job_id, expires = self.state.log_links.get(token, (0, self.now()))
        job = self.state.jobs.get(job_id)
        if job is None or job.log is None or expires <= self.now():
            return Reply(status=403, raw=b"AuthenticationFailed: the link has expired",
                         content_type="text/plain")
        return Reply(raw=job.log.encode(), content_type="text/plain")

    def _fault_reply(self, fault: Fault) -> Reply:
        headers = {**self.budgets["core"].headers(), **fault.headers}
        if isinstance(fault.body, dict | list):
            return Reply(status=fault.status, json=fault.body, headers=headers)
        data = fault.body.encode() if isinstance(fault.body, str) else bytes(fault.body)
        return Reply(status=fault.status, raw=data, content_type="text/html; charset=utf-8",
                     headers=headers)

    def _finish(self, request: web.Request, operation: spec.Operation | None, reply: Reply,
                budget: Budget | None) -> web.Response:
        data = reply.raw if reply.raw is not None else (
            b"" if reply.json is None else json.dumps(reply.json).encode())
        headers = {"x-github-media-type": "github.v3; format=json",
                   "x-github-api-version-selected": "2022-11-28",
                   "x-github-request-id": f"FAKE:{len(self.calls):06X}"}
        if reply.paginated_total is not None:
            link = link_header(self.url, self._link_path(request.path), dict(request.query),
                               reply.paginated_total)
            if link:
                headers["Link"] = link
        not_modified = False
        if request.method == "GET" and reply.status == 200:
            etag = 'W/"' + hashlib.sha256(data).hexdigest()[:32] + '"'
            headers["ETag"] = etag
            sent = {t.strip().removeprefix("W/") for t in
                    request.headers.get("If-None-Match", "").split(",")}
            not_modified = etag.removeprefix("W/") in sent
        if budget is not None and not not_modified:
            # Conditional hits are free on github.com; everything else spends budget.
            budget.remaining = max(budget.remaining - 1, 0)
        headers.update((budget or self.budgets["core"]).headers())
        headers.update(reply.headers)
        if operation and self.check_responses and reply.json is not None:
            self.response_problems += spec.check_response(operation, reply.status, reply.json)
        if not_modified:
            return web.Response(status=304, headers=headers)
        content_type = reply.content_type if data or reply.json is not None else None
        response = web.Response(status=reply.status, body=data, headers=headers)
        if content_type:
            response.headers["Content-Type"] = content_type
        return response

    def _link_path(self, path: str) -> str:
        found = _REPOS_PATH.match(path)
        if not self.repository_id_links or found is None:
            return path
        repo = self.state.repos.get(f"{found[1]}/{found[2]}")
        return f"/repositories/{repo.id}{found[3] or ''}" if repo else path

    def _record(self, request: web.Request, raw: bytes, operation: spec.Operation | None,
                status: int, reply: Reply) -> None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        if "authorization" in headers:
            headers["authorization"] = headers["authorization"].split(" ")[0] + " <redacted>"
        try:
            body: Any = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        operation_id = operation.operation_id if operation else (
            "fake/job-log-blob" if request.path.startswith(LOG_BLOB_PREFIX) else
            GRAPHQL_OPERATION if request.path == GRAPHQL_PATH else None)
        try:
            path = self._canonical_path(request.path)
        except ApiError:
            path = request.path
        self.calls.append(RecordedCall(request.method, path, dict(request.query), operation_id,
                                       status, body, headers, reply.json, request.path))
