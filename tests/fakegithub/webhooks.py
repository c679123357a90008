"""Webhook deliveries as GitHub sends them: vendored real payloads, signatures, headers."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from pathlib import Path
from typing import Any

from .spec import DATA_DIR

WEBHOOKS_DIR = DATA_DIR / "webhooks"
HOOKSHOT_USER_AGENT = "GitHub-Hookshot/4f6b1b8"


def payload_path(name: str) -> Path:
    """`name` as in the file names: `pull_request.opened`, `issue_comment.created.1`…"""
    path = WEBHOOKS_DIR / f"{name}.json"
    if not path.is_file():
        known = sorted(p.stem for p in WEBHOOKS_DIR.glob("*.json"))
        raise FileNotFoundError(f"no vendored payload {name!r}; known: {', '.join(known)}")
    return path


def load_payload(name: str) -> dict[str, Any]:
    return dict(json.loads(payload_path(name).read_text(encoding="utf-8")))


def _key(secret: bytes | str) -> bytes:
    return secret.encode("utf-8") if isinstance(secret, str) else secret


def sign(secret: bytes | str, body: bytes) -> str:
    """The `X-Hub-Signature-256` value: "sha256=" + hex HMAC-SHA256 of the raw body."""
    return "sha256=" + hmac.new(_key(secret), body, hashlib.sha256).hexdigest()


def webhook_headers(
    event: str,
    delivery_id: str,
    body: bytes,
    secret: bytes | str,
    *,
    hook_id: int = 109948940,
    target_id: int = 424242,
    target_type: str = "integration",
) -> dict[str, str]:
    """Headers of a GitHub App delivery (`target_type="repository"` for a repo webhook)."""
    return {
        "Accept": "*/*",
        "Content-Type": "application/json",
        "User-Agent": HOOKSHOT_USER_AGENT,
        "X-GitHub-Delivery": delivery_id,
        "X-GitHub-Event": event,
        "X-GitHub-Hook-ID": str(hook_id),
        "X-GitHub-Hook-Installation-Target-ID": str(target_id),
        "X-GitHub-Hook-Installation-Target-Type": target_type,
        # GitHub still sends the legacy SHA-1 signature next to the SHA-256 one.
        "X-Hub-Signature": "sha1=" + hmac.new(_key(secret), body, hashlib.sha1).hexdigest(),
        "X-Hub-Signature-256": sign(secret, body),
    }


def signed_delivery(
    name: str,
    secret: bytes | str,
    *,
    payload: dict[str, Any] | None = None,
    delivery_id: str | None = None,
    **header_options: Any,
) -> tuple[bytes, dict[str, str]]:
    """(body, headers) for a vendored payload (or an edited copy passed as `payload`)."""
    # Unedited payloads go out byte-for-byte as recorded.
    body = payload_path(name).read_bytes() if payload is None else json.dumps(payload).encode()
    event = name.split(".", 1)[0]
    headers = webhook_headers(event, delivery_id or str(uuid.uuid4()), body, secret,
                              **header_options)
    return body, headers
