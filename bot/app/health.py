"""Readiness, liveness and the Prometheus page.

`/metrics` is not served on the public webhook port: it shows queue depths, GitHub
call counts and rate-limit figures that nobody outside needs. `serve` runs it on its
own listener (`METRICS_PORT`, bound to 127.0.0.1 unless `METRICS_HOST` says
otherwise); on the webhook port it exists only when `METRICS_TOKEN` is set, and then
asks for `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hmac
import time

from aiohttp import web

from bot.app.metrics import CONTENT_TYPE, Metrics
from bot.app.queue import Worker
from bot.store import Store

STORE_KEY = web.AppKey("store", Store)
METRICS_KEY = web.AppKey("metrics", Metrics)
WORKER_KEY = web.AppKey("worker", Worker)
TOKEN_KEY = web.AppKey("metrics_token", str)


async def healthz(request: web.Request) -> web.Response:
    """Readiness: 200 while this replica takes webhooks and work; 503 when its store is
    unreachable or it is draining (SIGTERM), so a load balancer sends webhooks elsewhere."""
    store = request.app[STORE_KEY]
    worker = request.app.get(WORKER_KEY)
    try:
        reachable = store.ping()
        counts = store.counts() if reachable else None
    except Exception:
        reachable, counts = False, None
    if not reachable or counts is None:
        return web.json_response({"status": "unavailable", "store": "unreachable"}, status=503)
    draining = worker is not None and worker.draining
    return web.json_response({
        "status": "draining" if draining else "ok",
        "store": "ok",
        "queue": counts,
        "dead_letters": counts.get("dead", 0),
    }, status=503 if draining else 200)


async def liveness(request: web.Request) -> web.Response:
    """Liveness: the process answers and its lease renewal keeps beating. It never asks
    the database (a database outage is no reason to restart every replica)."""
    worker = request.app.get(WORKER_KEY)
    if worker is not None and not worker.draining:
        silent = time.monotonic() - worker.last_beat
        if silent > 3 * worker.store.lease_seconds:
            return web.json_response({"status": "stalled", "beat_age_s": round(silent, 1)},
                                     status=503)
    return web.json_response({"status": "alive"})


async def metrics_page(request: web.Request) -> web.Response:
    token = request.app.get(TOKEN_KEY)
    if token is not None:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode("utf-8", "replace"), token.encode()):
            return web.json_response({"error": "metrics need the METRICS_TOKEN bearer token"},
                                     status=401, headers={"WWW-Authenticate": "Bearer"})
    body = request.app[METRICS_KEY].render()
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


def build_metrics_app(metrics: Metrics, store: Store, worker: Worker | None) -> web.Application:
    """The private listener's app: `/metrics` and the health checks, no webhooks."""
    app = web.Application(client_max_size=1024)
    app[STORE_KEY] = store
    app[METRICS_KEY] = metrics
    if worker is not None:
        app[WORKER_KEY] = worker
    metrics.watch_store(store)
    add_health_routes(app)
    app.router.add_get("/metrics", metrics_page)
    return app


def add_health_routes(app: web.Application) -> None:
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/healthz/live", liveness)
