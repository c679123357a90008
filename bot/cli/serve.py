"""`ci-stability serve`: run the GitHub App (webhook intake, workers, health, metrics).

The event handling itself comes from `bot.app.compose.build_handler(settings, store, metrics)`,
which returns an async callable taking a `Delivery` (it may also be a coroutine
function returning one; a returned object with `aclose()` is closed at shutdown).
Until that module exists, deliveries are logged and completed so the server can be
deployed and exercised on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp
from aiohttp import web

from bot.advisor.settings import NO_KEY, AdvisorSettings, AdvisorSettingsError
from bot.app.compose import build_handler, confirm_bot_login
from bot.app.health import build_metrics_app
from bot.app.jsonlog import configure_logging
from bot.app.metrics import Metrics
from bot.app.queue import Handler, Worker
from bot.app.settings import Settings, SettingsError
from bot.app.web import build_web_app
from bot.store import Store, StoreError, open_store, redacted_url

log = logging.getLogger("bot.serve")

EXIT_OK, EXIT_USAGE = 0, 2
HandlerFactory = Callable[[Settings, Store, Metrics], "Handler | Awaitable[Handler]"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ci-stability serve",
        description="Run the GitHub App: receive webhooks, queue them durably, review PRs.",
        epilog="Settings come from the environment (GITHUB_APP_ID, GITHUB_PRIVATE_KEY or "
               "GITHUB_PRIVATE_KEY_PATH, GITHUB_WEBHOOK_SECRET, GITHUB_API_URL, "
               "CI_STABILITY_DB, PORT, CI_STABILITY_WORKERS, …); see the README.",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (0.0.0.0)")
    parser.add_argument("--port", type=int, metavar="P",
                        help="port to listen on (default: $PORT, else 8080; 0 picks a free one)")
    parser.add_argument("--log-level", default=os.environ.get("CI_STABILITY_LOG_LEVEL", "INFO"),
                        choices=("DEBUG", "INFO", "WARNING", "ERROR"), type=str.upper)
    return parser


def main(argv: Sequence[str] | None = None, handler_factory: HandlerFactory | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.port is not None and not 0 <= args.port <= 65535:
        sys.stderr.write(f"ci-stability serve: --port {args.port} is not a port (0-65535)\n")
        return EXIT_USAGE
    try:
        settings = Settings.from_env(os.environ)
    except SettingsError as exc:
        sys.stderr.write(f"ci-stability serve: {exc}\n")
        return EXIT_USAGE
    try:
        advisor = AdvisorSettings.from_env(os.environ)
    except AdvisorSettingsError as exc:
        sys.stderr.write(f"ci-stability serve: {exc}\n")
        return EXIT_USAGE
    model_key = (advisor.api_key,) if advisor is not None and advisor.api_key != NO_KEY else ()
    configure_logging(args.log_level, secrets=settings.secrets + model_key)
    lean_log_records()
    port = settings.port if args.port is None else args.port
    try:
        asyncio.run(serve(settings, args.host, port, handler_factory))
    except (StoreError, SettingsError) as exc:
        sys.stderr.write(f"ci-stability serve: {exc}\n")
        return EXIT_USAGE
    except OSError as exc:
        sys.stderr.write(f"ci-stability serve: cannot listen on {args.host}:{port}: "
                         f"{exc.strerror or exc}\n")
        return EXIT_USAGE
    return EXIT_OK


async def serve(
    settings: Settings, host: str, port: int, handler_factory: HandlerFactory | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Run until SIGTERM/SIGINT (or `stop` is set), then drain in order: report not
    ready and stop claiming, let running handlers finish (`drain_seconds`; what is left
    is handed back for another replica), stop taking webhooks, close the store."""
    if handler_factory is None:  # the real App: its login must be the App's own
        async with aiohttp.ClientSession() as session:
            settings = await confirm_bot_login(settings, session)
    store = open_store(settings.db_path, settings.lease_seconds)
    metrics = Metrics()
    try:
        handler = await _make_handler(handler_factory or build_handler,
                                      settings, store, metrics)
        worker = Worker(store, handler, settings.workers, settings.max_attempts,
                        metrics=metrics)
        web_app = build_web_app(settings, store, worker, metrics,
                                intake_process=settings.intake_process)
        mount = getattr(handler, "mount_routes", None)  # e.g. the App's Buildkite webhook
        if mount is not None:
            mount(web_app)
        runner = web.AppRunner(web_app, access_log=None, handle_signals=False)
        await runner.setup()
        private = await _metrics_listener(settings, metrics, store, worker)
        try:
            site = web.TCPSite(runner, host, port)
            await site.start()
            log.info("listening", extra={"host": host, "port": _bound_port(runner, port),
                                         "workers": settings.workers,
                                         "db": redacted_url(settings.db_path),
                                         "replica": store.owner})
            await worker.start()
            await _wait_for_signal(stop or asyncio.Event())
            # Webhooks are still taken while draining: they are durable, and a shared
            # queue's other replicas pick them up.
            log.info("draining: not ready, no new claims; waiting for running deliveries")
            await worker.stop(settings.drain_seconds)
        finally:
            await worker.stop(0)
            await runner.cleanup()
            if private is not None:
                await private.cleanup()
        await _close(handler)
    finally:
        store.close()
    log.info("stopped")


async def _metrics_listener(settings: Settings, metrics: Metrics, store: Store,
                            worker: Worker) -> web.AppRunner | None:
    """`/metrics` on its own (by default loopback-only) listener. A port in use costs
    the metrics, not the webhooks: logged as an error, and serving goes on."""
    if settings.metrics_port is None:
        return None
    runner = web.AppRunner(build_metrics_app(metrics, store, worker), access_log=None,
                           handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, settings.metrics_host, settings.metrics_port).start()
    except OSError as exc:
        log.error("metrics not served: cannot listen", extra={
            "host": settings.metrics_host, "port": settings.metrics_port,
            "reason": exc.strerror or str(exc)})
        await runner.cleanup()
        return None
    log.info("metrics listening", extra={"host": settings.metrics_host,
                                         "port": _bound_port(runner, settings.metrics_port)})
    return runner


def lean_log_records() -> None:
    """The JSON lines never show a record's source file, thread or process, and looking
    them up (a stack walk for the caller) costs a few µs on every intake log line; the
    logging HOWTO's "Optimization" section documents these switches."""
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False


async def _make_handler(
    factory: HandlerFactory, settings: Settings, store: Store, metrics: Metrics
) -> Handler:
    made: Any = factory(settings, store, metrics)
    if inspect.isawaitable(made):
        made = await made
    handler: Handler = made
    return handler


async def _close(handler: object) -> None:
    closer = getattr(handler, "aclose", None)
    if closer is not None:
        with contextlib.suppress(Exception):
            await closer()


async def _wait_for_signal(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)


def _bound_port(runner: web.AppRunner, requested: int) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return requested


if __name__ == "__main__":
    sys.exit(main())
