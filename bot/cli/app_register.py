"""`ci-stability app register`: create the GitHub App from app.yaml with the manifest flow.

Serves a page on 127.0.0.1 that POSTs the manifest to GitHub, receives GitHub's redirect
with the temporary code, exchanges it (`POST /app-manifests/{code}/conversions`) and
writes the App's id, slug, bot login and webhook secret to an env file and its private
key to a .pem file, both readable only by you (mode 0600). The code is good for an hour
and for one exchange: this is the one moment the key and secret can be had.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from bot.errors import RetryableError
from bot.github.calls import DEFAULT_API_URL, GitHubError
from bot.github.drive_sync import SyncDriver
from bot.github.manifest import (
    build_manifest,
    exchange_code,
    form_action,
    form_page,
    settings_env,
)

DEFAULT_WEB_URL = "https://github.com"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ci-stability app")
    sub = parser.add_subparsers(dest="action", required=True)
    register = sub.add_parser("register", help="create the GitHub App from its manifest")
    register.add_argument("--webhook-url", required=True,
                          help="where GitHub will send webhooks (your server's /webhook)")
    register.add_argument("--manifest", default="app.yaml", help="the App manifest (app.yaml)")
    register.add_argument("--name", help="the App's name (default: the manifest's)")
    register.add_argument("--org", help="register it on this organization, not your account")
    register.add_argument("--env-file", default="ci-stability.env",
                          help="settings file to write (mode 0600)")
    register.add_argument("--port", type=int, default=8765, help="local port (0: any free)")
    register.add_argument("--timeout", type=float, default=900,
                          help="seconds to wait for GitHub's redirect")
    register.add_argument("--no-browser", action="store_true", help="only print the URL")
    return parser


def write_private(path: Path, text: str) -> None:
    """Create (or replace) `path` readable and writable by its owner alone."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)  # an existing file keeps its old mode otherwise
        handle.write(text)


class Registration:
    """The local web server's state: the page, the expected `state`, the outcome."""

    def __init__(self, args: argparse.Namespace, app_yaml: dict[str, Any]) -> None:
        self.args = args
        self.app_yaml = app_yaml
        self.state = secrets.token_urlsafe(16)
        self.web_url = os.environ.get("GITHUB_URL") or DEFAULT_WEB_URL
        self.api_url = os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL
        self.redirect = ""
        self.done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def page(self, _request: web.Request) -> web.Response:
        manifest = build_manifest(self.app_yaml, self.args.webhook_url, self.redirect,
                                  self.args.name)
        action = form_action(self.web_url, self.state, self.args.org)
        return web.Response(text=form_page(manifest, action), content_type="text/html")

    async def callback(self, request: web.Request) -> web.Response:
        code, state = request.query.get("code", ""), request.query.get("state", "")
        if not code or not secrets.compare_digest(state, self.state):
            return web.Response(status=400, text="Unknown or missing state: start again from "
                                "the page `ci-stability app register` printed.")
        try:
            app = await asyncio.to_thread(self._exchange, code)
        except (GitHubError, RetryableError) as exc:
            sys.stderr.write(f"ci-stability app register: the code exchange failed: {exc}\n")
            self._finish(2)
            return web.Response(status=502, text=f"The code exchange failed: {exc}")
        lines = self._save(app)
        sys.stdout.write(lines)
        self._finish(0)
        install = f"{app.get('html_url') or self.web_url + '/apps/' + str(app['slug'])}"
        return web.Response(text=f"Registered {app['slug']} (App id {app['id']}). Install it "
                                 f"on your repositories: {install}/installations/new\n")

    def _exchange(self, code: str) -> dict[str, Any]:
        driver = SyncDriver("", base_url=self.api_url, seconds_between_requests=0,
                            seconds_between_writes=0)
        try:
            return driver.run(exchange_code(code))
        finally:
            driver.close()

    def _save(self, app: dict[str, Any]) -> str:
        env_file = Path(self.args.env_file).resolve()
        key_file = env_file.with_name(f"{app['slug']}.private-key.pem")
        write_private(key_file, str(app["pem"]))
        write_private(env_file, settings_env(app, str(key_file), self.api_url))
        return (f"Registered the GitHub App {app['slug']} (id {app['id']}).\n"
                f"Settings: {env_file} (mode 0600); private key: {key_file} (mode 0600).\n"
                f"Start the App with: set -a; . {env_file}; set +a; ci-stability serve\n")

    def _finish(self, code: int) -> None:
        if not self.done.done():
            self.done.set_result(code)


async def register(args: argparse.Namespace, app_yaml: dict[str, Any]) -> int:
    registration = Registration(args, app_yaml)
    server = web.Application()
    server.router.add_get("/", registration.page)
    server.router.add_get("/callback", registration.callback)
    runner = web.AppRunner(server, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port)
    await site.start()
    host, port = runner.addresses[0][:2]
    registration.redirect = f"http://{host}:{port}/callback"
    url = f"http://{host}:{port}/"
    sys.stdout.write(f"Open {url} in your browser to register the App on GitHub.\n")
    sys.stdout.flush()
    if not args.no_browser:
        webbrowser.open(url)
    try:
        return await asyncio.wait_for(registration.done, args.timeout)
    except TimeoutError:
        sys.stderr.write("ci-stability app register: no redirect from GitHub in time\n")
        return 2
    finally:
        await asyncio.sleep(0.2)  # let the last page reach the browser
        await runner.cleanup()


def main(argv: Sequence[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    try:
        app_yaml = yaml.safe_load(Path(args.manifest).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        sys.stderr.write(f"ci-stability app register: cannot read {args.manifest}: {exc}\n")
        return 2
    if not isinstance(app_yaml, dict) or not app_yaml.get("url"):
        sys.stderr.write(f"ci-stability app register: {args.manifest} is not an App manifest "
                         "(a mapping with at least `url`)\n")
        return 2
    return asyncio.run(register(args, app_yaml))
