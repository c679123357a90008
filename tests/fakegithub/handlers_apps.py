"""GitHub's App manifest flow: the web form (github.com/settings/apps/new) and the
code exchange (`POST /app-manifests/{code}/conversions`).

github.com shows the person a confirmation page before it redirects; the fake redirects
at once (a test plays the person who clicked "Create GitHub App"). Codes are single-use
and expire after an hour, as GitHub documents.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from .auth import generate_rsa_keypair
from .context import Ctx
from .errors import ApiError, Reply
from .state import App, State

CODE_LIFETIME = timedelta(hours=1)


@dataclass
class PendingManifest:
    manifest: dict[str, Any]
    owner: str
    created_at: datetime


def submit_manifest(state: State, now: datetime, form: dict[str, str], owner: str) -> str:
    """The form POST: validate the manifest, remember it under a code, return the redirect."""
    try:
        manifest = json.loads(form.get("manifest", ""))
    except ValueError:
        raise ApiError(422, "Invalid GitHub App manifest: not JSON") from None
    if not isinstance(manifest, dict) or not manifest.get("url"):
        raise ApiError(422, "Invalid GitHub App manifest: `url` is required")
    redirect = manifest.get("redirect_url")
    if not isinstance(redirect, str) or not redirect:
        raise ApiError(422, "Invalid GitHub App manifest: no redirect_url")
    code = secrets.token_hex(10)
    state.manifests[code] = PendingManifest(manifest, owner, now)
    query = {"code": code, **({"state": form["state"]} if form.get("state") else {})}
    return f"{redirect}{'&' if '?' in redirect else '?'}{urlencode(query)}"


def create_from_manifest(ctx: Ctx) -> Reply:
    pending = ctx.state.manifests.pop(ctx.params["code"], None)
    if pending is None or ctx.now - pending.created_at > CODE_LIFETIME:
        raise ApiError(404, "Not Found")
    manifest = pending.manifest
    private_pem, public_pem = generate_rsa_keypair()
    app_id = 424242 + len(ctx.state.manifests_converted) + 1
    name = str(manifest.get("name") or "app")
    slug = name.lower().replace(" ", "-")
    ctx.state.app = App(app_id, slug, name, public_pem, owner=pending.owner)
    ctx.state.manifests_converted.append(app_id)
    hook = manifest.get("hook_attributes") or {}
    owner = {"login": pending.owner, "id": 1, "node_id": "MDEyOk9yZ2FuaXphdGlvbjE=",
             "type": "Organization", "site_admin": False}
    return Reply(status=201, json={
        "id": app_id, "slug": slug, "node_id": f"MDM6QXBw{app_id}", "name": name,
        "owner": owner, "description": manifest.get("description"),
        "external_url": manifest["url"], "html_url": f"{ctx.base_url}/apps/{slug}",
        "created_at": ctx.now.isoformat().replace("+00:00", "Z"),
        "updated_at": ctx.now.isoformat().replace("+00:00", "Z"),
        "permissions": manifest.get("default_permissions") or {},
        "events": manifest.get("default_events") or [],
        "client_id": f"Iv1.{secrets.token_hex(8)}", "client_secret": secrets.token_hex(20),
        "webhook_secret": secrets.token_hex(20) if hook.get("url") else None,
        "pem": private_pem,
    })


def get_authenticated(ctx: Ctx) -> Reply:
    """`GET /app` with the App's JWT: the App, whose bot posts as "<slug>[bot]"."""
    return Reply(status=200, json=ctx.shapes.app())


HANDLERS = {"apps/create-from-manifest": create_from_manifest,
            "apps/get-authenticated": get_authenticated}
