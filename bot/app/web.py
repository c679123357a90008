"""The App's HTTP face: webhook intake and health (aiohttp).

`POST /webhook` checks `X-Hub-Signature-256` in constant time while the body streams
in, in bounded memory (bot/app/signed_body.py), before anything else looks at it;
persists the delivery keyed by `X-GitHub-Delivery`, wakes the workers and answers at
once; GitHub gives up on a delivery after 10 s and never retries it by itself.
`/metrics` lives on its own listener (bot/app/health.py).

Persisting goes through group commit (bot/store/group_commit.py) into the inbox
(bot/store/inbox.py): the deliveries that arrive while a batch is being written share
the next transaction, and each `202` goes out only after the transaction holding its
delivery committed, so an acknowledged delivery survives the process dying (SQLite WAL
with synchronous=NORMAL; PostgreSQL's commit). On the request path: the signature, the
headers, `action` for the event filter, one inbox row; the debounce key and the queue's
indexes are the promoter's. A redelivered id is answered `200 duplicate` (inbox and
queue both checked), restarts included. The log line, metrics and the workers'
wake-up come once per committed batch (`_Intake.committed`), not once per request.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qs

from aiohttp import web

from bot.app.events import accepts
from bot.app.health import (
    METRICS_KEY,
    STORE_KEY,
    TOKEN_KEY,
    WORKER_KEY,
    add_health_routes,
    metrics_page,
)
from bot.app.metrics import Metrics
from bot.app.queue import Worker
from bot.app.settings import Settings
from bot.app.signed_body import MAX_BODY_BYTES as MAX_BODY_BYTES
from bot.app.signed_body import Rejected, read_signed
from bot.app.signed_body import signature_for as signature_for
from bot.app.signed_body import signature_ok as signature_ok
from bot.store import GroupCommitter, NewDelivery, Store
from bot.store.delivery_fields import DeliveryFields, scan_prefix
from bot.store.intake_process import IntakeProcess, intake_target

log = logging.getLogger("bot.web")

_fast_loads: Callable[[bytes], Any]
try:  # orjson parses a 28 kB payload ~3x faster than json, which matters at intake
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - optional dependency
    _fast_loads = json.loads

DEFAULT_DEBOUNCE_SECONDS = 5.0
EventFilter = Callable[[str, "str | None"], bool]

_DELIVERY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_EVENT_NAME = re.compile(r"[a-z_]{1,64}")



accepts_default = accepts  # the default event filter: bot/app/events.py


def build_web_app(
    settings_or_secret: Settings | str | bytes,
    store: Store,
    worker: Worker | None,
    metrics: Metrics,
    *,
    accepts: EventFilter = accepts_default,
    debounce_seconds: float | None = None,
    clock: Callable[[], float] = time.time,
    committer: GroupCommitter | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    metrics_token: str | None = None,
    intake_process: bool = False,
) -> web.Application:
    """The aiohttp app. Deliveries are group-committed into `store`, or through
    `committer` when one is passed (tests share one to read its counters), or, with
    `intake_process` (CI_STABILITY_INTAKE_PROCESS=1), by a writer process on `store`'s database
    (bot/store/intake_process.py). `/metrics` is served here only behind
    `metrics_token` (bot/app/health.py)."""
    if isinstance(settings_or_secret, Settings):
        secret = settings_or_secret.webhook_secret.encode()
        debounce = settings_or_secret.debounce_seconds
        metrics_token = metrics_token or settings_or_secret.metrics_token
    else:
        raw = settings_or_secret
        secret = raw.encode() if isinstance(raw, str) else raw
        debounce = DEFAULT_DEBOUNCE_SECONDS
    if debounce_seconds is not None:
        debounce = debounce_seconds
    if not secret:
        raise ValueError("a webhook secret is required: unsigned deliveries are never accepted")
    metrics.watch_store(store)
    store.offload_checkpoints()  # intake's commits run on the loop: no fsync in them
    target = intake_target(store) if intake_process and committer is None else None
    group_commit: GroupCommitter | IntakeProcess = (
        committer or (IntakeProcess(target) if target else GroupCommitter(store)))
    intake = _Intake(secret, group_commit, worker, metrics, accepts, debounce, clock,
                     max_body_bytes)
    group_commit.on_commit = intake.committed
    app = web.Application(client_max_size=max_body_bytes)
    app[STORE_KEY] = store
    app[METRICS_KEY] = metrics
    if worker is not None:
        app[WORKER_KEY] = worker
    app.router.add_post("/webhook", intake.webhook)
    add_health_routes(app)
    if metrics_token:
        app[TOKEN_KEY] = metrics_token
        app.router.add_get("/metrics", metrics_page)

    async def start_committer(_: web.Application) -> None:
        if isinstance(group_commit, IntakeProcess):
            await group_commit.start()

    async def close_committer(_: web.Application) -> None:
        if isinstance(group_commit, IntakeProcess):
            await group_commit.aclose()
        group_commit.close()
        log.info("intake closed", extra=group_commit.stats())

    app.on_startup.append(start_committer)
    app.on_cleanup.append(close_committer)
    return app


class _Intake:
    def __init__(
        self, secret: bytes, committer: GroupCommitter | IntakeProcess, worker: Worker | None,
        metrics: Metrics, accepts: EventFilter, debounce: float, clock: Callable[[], float],
        max_body_bytes: int,
    ) -> None:
        self.secret, self.committer, self.worker, self.metrics = secret, committer, worker, metrics
        self.accepts, self.debounce, self.clock = accepts, debounce, clock
        self.max_body_bytes = max_body_bytes

    async def webhook(self, request: web.Request) -> web.Response:
        try:
            body = await read_signed(request, self.secret, self.max_body_bytes)
        except Rejected as why:
            return self._reject("unknown", why.outcome, why.status, why.reason)
        # Only now, with the sender authenticated, is anything in the request trusted.
        event = request.headers.get("X-GitHub-Event", "")
        delivery_id = request.headers.get("X-GitHub-Delivery", "")
        if not _EVENT_NAME.fullmatch(event) or not _DELIVERY_ID.fullmatch(delivery_id):
            return self._reject(event, "bad_request", 400,
                                "missing or malformed X-GitHub-Event / X-GitHub-Delivery")
        if event == "ping":
            self.metrics.delivery_received(event, "ping")
            return web.json_response({"status": "pong"})
        # The fast path reads only `action` from the raw bytes (the event filter needs
        # it); the promoter reads the debounce key (bot/store/inbox.py) and the worker
        # parses the payload in full, dead-lettering one that turns out not to be JSON.
        prefix = scan_prefix(body) if request.content_type == "application/json" else None
        if prefix is not None and (prefix.number is not None or event != "pull_request"):
            # (GitHub's pull_request payloads carry `number` second: one that does not
            # is parsed here, and refused here if it does not parse.)
            action: str | None = prefix.action
        else:
            payload, body, problem = _parse_payload(body, request.content_type)
            if problem is not None:
                return self._reject(event, "bad_request", 400, problem)
            if not isinstance(payload, dict):
                return self._reject(event, "bad_request", 400, "payload is not a JSON object")
            action = payload.get("action") if isinstance(payload.get("action"), str) else None
            try:  # a lone surrogate (`"\ud800"`) parses, but no store can hold it as text
                (action or "").encode()
            except UnicodeEncodeError:
                return self._reject(event, "bad_request", 400,
                                    "`action` is not valid Unicode")
        if not self.accepts(event, action):
            return self._ignored(event, action, delivery_id)
        return await self._persist(delivery_id, event, action, body)

    async def _persist(self, delivery_id: str, event: str, action: str | None,
                       body: bytes) -> web.Response:
        now = self.clock()
        # A push waits out the debounce; the promoter makes it due at once if the
        # payload names no pull request to debounce on.
        not_before = now + self.debounce if (event, action) == ("pull_request",
                                                                 "synchronize") else now
        delivery = NewDelivery(delivery_id, event, action, body, now, not_before)
        try:
            added = await self.committer.add(delivery)
        except Exception:
            log.exception("could not persist the delivery",
                          extra=_log_fields(delivery_id, event, action, None))
            self.metrics.delivery_received(event, "error")
            return web.json_response({"error": "store unavailable"}, status=503)
        if not added:
            return web.Response(status=200, body=_DUPLICATE, content_type="application/json")
        # The id matched _DELIVERY_ID (no quote, backslash or control character), so it
        # can be pasted into the JSON as is.
        return web.Response(status=202, body=b'{"status": "queued", "delivery_id": "'
                            + delivery_id.encode() + b'"}', content_type="application/json")

    def committed(self, batch: Sequence[NewDelivery], added: Sequence[bool]) -> None:
        """Once per committed batch (on the loop): metrics, the workers' wake-up and
        one log line for the batch, not one per request (a JSON line costs ~12 µs)."""
        queued: dict[str, list[str]] = {}
        duplicates: dict[str, list[str]] = {}
        for delivery, new in zip(batch, added, strict=True):
            (queued if new else duplicates).setdefault(delivery.event, []).append(
                delivery.delivery_id)
        for outcome, by_event in (("accepted", queued), ("duplicate", duplicates)):
            for event, ids in by_event.items():
                self.metrics.delivery_received(event, outcome, len(ids))
        if queued and self.worker is not None:
            self.worker.notify()
        for message, by_event in (("deliveries queued", queued),
                                  ("duplicate deliveries ignored", duplicates)):
            if by_event:
                log.info(message, extra={"deliveries": by_event,
                                         "count": sum(map(len, by_event.values()))})

    def _ignored(self, event: str, action: str | None, delivery_id: str) -> web.Response:
        self.metrics.delivery_received(event, "ignored")
        if log.isEnabledFor(logging.DEBUG):
            log.debug("delivery ignored", extra=_log_fields(delivery_id, event, action, None))
        return web.Response(status=202, body=_IGNORED, content_type="application/json")

    def _reject(self, event: str, outcome: str, status: int, reason: str) -> web.Response:
        self.metrics.delivery_received(event or "unknown", outcome)
        log.warning("webhook rejected", extra={"reason": reason, "status": status})
        return web.json_response({"error": reason}, status=status)


_DUPLICATE = b'{"status": "duplicate"}'
_IGNORED = b'{"status": "ignored"}'


def _log_fields(delivery_id: str, event: str, action: str | None,
                fields: DeliveryFields | None) -> dict[str, Any]:
    """The intake log line's context, passed as `extra` (cheaper than log_context for a
    single line); None values are left out, as log_context does."""
    context: dict[str, Any] = {"delivery_id": delivery_id, "event": event}
    if action is not None:
        context["action"] = action
    if fields is not None:
        for key, value in (("repo", fields.repo), ("pr", fields.number),
                           ("head_sha", fields.head_sha)):
            if value is not None:
                context[key] = value
    return context


def _parse_payload(body: bytes, content_type: str) -> tuple[Any, bytes, str | None]:
    """The payload, the JSON bytes to queue (form-encoded deliveries carry the JSON in a
    `payload` field; GitHub Apps send JSON, repository hooks may send either), and why
    the payload cannot be read, if it cannot."""
    try:
        if content_type == "application/x-www-form-urlencoded":
            values = parse_qs(body.decode("utf-8"), max_num_fields=16).get("payload", [""])
            body = values[0].encode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None, body, None
    try:
        return _fast_loads(body), body, None
    except ValueError:
        pass  # orjson is stricter (e.g. integers over 64 bits): give json its chance
    try:
        return json.loads(body), body, None
    except RecursionError:
        # orjson stops at 1,024 levels and json at the interpreter's recursion limit;
        # GitHub's payloads nest about a dozen deep.
        return None, body, "payload is nested too deeply to be a GitHub webhook"
    except (ValueError, UnicodeDecodeError):
        return None, body, None
