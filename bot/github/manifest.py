"""GitHub's App manifest flow, sans-I/O: the manifest, the page that posts it, the code
exchange, and the settings the exchange yields.

https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest:
a form POSTs `manifest` (JSON) to github.com/settings/apps/new (or an organization's);
GitHub redirects to `redirect_url?code=…&state=…`; `POST /app-manifests/{code}/conversions`
within an hour returns the App's id, slug, private key (`pem`) and webhook secret.
"""

from __future__ import annotations

import html
import json
import re
import shlex
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from bot.github.calls import ApiCall, Flow, GitHubError

_PLAIN = re.compile(r"[\w@%+=:,./\[\]-]*")
# The manifest parameters GitHub documents; anything else in app.yaml is not sent.
MANIFEST_KEYS = ("name", "url", "description", "hook_attributes", "redirect_url",
                 "callback_urls", "setup_url", "public", "default_events",
                 "default_permissions", "request_oauth_on_install", "setup_on_update")


def build_manifest(app: Mapping[str, Any], webhook_url: str, redirect_url: str,
                   name: str | None = None) -> dict[str, Any]:
    """app.yaml's manifest with this server's webhook URL and the local redirect."""
    manifest = {key: app[key] for key in MANIFEST_KEYS if key in app}
    manifest["hook_attributes"] = {**dict(app.get("hook_attributes") or {}),
                                   "url": webhook_url, "active": True}
    manifest["redirect_url"] = redirect_url
    if name:
        manifest["name"] = name
    return manifest


def form_action(web_url: str, state: str, org: str | None = None) -> str:
    where = f"/organizations/{quote(org, safe='')}" if org else ""
    return f"{web_url.rstrip('/')}{where}/settings/apps/new?{urlencode({'state': state})}"


def form_page(manifest: Mapping[str, Any], action: str) -> str:
    """A page whose form POSTs the manifest to GitHub (submitted at once by the script)."""
    value = html.escape(json.dumps(manifest), quote=True)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<title>Register the ci-stability-bot GitHub App</title></head><body>"
        f"<form id='register' method='post' action='{html.escape(action, quote=True)}'>"
        f"<input type='hidden' name='manifest' value='{value}'>"
        "<p>GitHub will ask you to confirm the App's name and permissions.</p>"
        "<button type='submit'>Register the App on GitHub</button></form>"
        "<script>document.getElementById('register').submit()</script>"
        "</body></html>"
    )


def exchange_code(code: str) -> Flow[dict[str, Any]]:
    """`POST /app-manifests/{code}/conversions`: the App GitHub made, with its secrets."""
    call = ApiCall("POST", f"/app-manifests/{quote(code, safe='')}/conversions",
                   operation="apps/create-from-manifest")
    result = yield call
    if not result.ok or not isinstance(result.data, dict):
        raise GitHubError(call, result)
    return result.data


def settings_env(app: Mapping[str, Any], key_path: str, api_url: str) -> str:
    """The `ci-stability serve` settings for the new App, as an env file's lines."""
    values = {
        "GITHUB_APP_ID": str(app["id"]),
        "GITHUB_APP_SLUG": str(app["slug"]),
        "CI_STABILITY_BOT_LOGIN": f"{app['slug']}[bot]",
        "GITHUB_PRIVATE_KEY_PATH": key_path,
        "GITHUB_WEBHOOK_SECRET": str(app.get("webhook_secret") or ""),
        "GITHUB_API_URL": api_url,
    }
    return "".join(f"{name}={_env_value(value)}\n" for name, value in values.items())


def _env_value(value: str) -> str:
    """As is when the shell, systemd and docker read it alike (`[bot]` included:
    assignments are not globbed), else shell-quoted."""
    return value if _PLAIN.fullmatch(value) else shlex.quote(value)
