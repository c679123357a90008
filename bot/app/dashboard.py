"""`GET /`: the failure dashboard, behind a token, routed only when one is configured.

`CI_STABILITY_DASHBOARD_TOKEN` is required as `Authorization: Bearer <token>` or as
the password of HTTP basic auth (any user name), so a browser can open the page.
Without the setting the route does not exist: the webhook's server answers 404 at
`/` as before. The page reads the failure index and the store's waivers off the
event loop and is rendered by `dashboard_page` (no script).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from aiohttp import web

from bot.app.dashboard_page import render_dashboard
from bot.evidence.records import FailureIndex, JobQuery
from bot.evidence.trends import trends
from bot.store.base import Store

WINDOW_DAYS = 28
MAX_JOBS = 5000
MAX_WAIVERS = 200
_CHALLENGE = 'Bearer realm="ci-stability dashboard", Basic realm="ci-stability dashboard"'
# No script, no outside resources: only the page's own inline style and SVG.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"


def token_matches(header: str | None, token: str) -> bool:
    """The `Authorization` header carries `token` as a bearer token or basic password."""
    if not header or not token:
        return False
    scheme, _, value = header.strip().partition(" ")
    offered = ""
    if scheme.lower() == "bearer":
        offered = value.strip()
    elif scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return False
        offered = decoded.partition(":")[2]
    return hmac.compare_digest(offered.encode(), token.encode())


def dashboard_handler(token: str, index: Callable[[], FailureIndex], store: Store,
                      clock: Callable[[], float]
                      ) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def dashboard(request: web.Request) -> web.Response:
        if not token_matches(request.headers.get("Authorization"), token):
            return web.Response(status=401, text="a dashboard token is required\n",
                                headers={"WWW-Authenticate": _CHALLENGE})
        now = datetime.fromtimestamp(clock(), UTC)
        page = await asyncio.to_thread(_page, index(), store, now)
        return web.Response(text=page, content_type="text/html", headers={
            "Content-Security-Policy": _CSP, "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
        })

    return dashboard


def _page(index: FailureIndex, store: Store, now: datetime) -> str:
    since = now - timedelta(days=WINDOW_DAYS)
    jobs = index.jobs(JobQuery(since=since, limit=MAX_JOBS))
    return render_dashboard(trends(jobs, now=now, days=WINDOW_DAYS),
                            store.current_waivers(MAX_WAIVERS), now=now)


def mount_dashboard(app: web.Application, token: str | None, index: Callable[[], FailureIndex],
                    store: Store, clock: Callable[[], float]) -> bool:
    """Route `GET /` when a token is configured; True when it was routed."""
    if not token:
        return False
    app.router.add_get("/", dashboard_handler(token, index, store, clock))
    return True
