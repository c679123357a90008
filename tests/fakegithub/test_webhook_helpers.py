"""Webhook helpers: the documented signature test vector and GitHub's delivery headers."""

from __future__ import annotations

import hashlib
import hmac
import json

from .webhooks import WEBHOOKS_DIR, load_payload, sign, signed_delivery, webhook_headers


def test_signature_matches_githubs_documented_vector() -> None:
    # From GitHub's "Validating webhook deliveries" docs (see LIMITS.md).
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign("It's a Secret to Everybody", b"Hello, World!") == expected
    assert sign(b"It's a Secret to Everybody", b"Hello, World!") == expected


def test_headers_are_those_github_sends() -> None:
    body = b'{"zen": "Keep it logically awesome."}'
    headers = webhook_headers("ping", "d7f1c0e0-0000-11ef-0000-000000000000", body, "s3cret")
    assert headers["X-GitHub-Event"] == "ping"
    assert headers["X-GitHub-Hook-Installation-Target-Type"] == "integration"
    assert headers["User-Agent"].startswith("GitHub-Hookshot/")
    assert headers["Content-Type"] == "application/json"
    digest = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Hub-Signature-256"], f"sha256={digest}")


def test_vendored_payloads_load_and_sign() -> None:
    assert len(list(WEBHOOKS_DIR.glob("*.json"))) >= 63
    opened = load_payload("pull_request.opened")
    assert opened["action"] == "opened" and opened["pull_request"]["number"] > 0
    body, headers = signed_delivery("issue_comment.created", "s3cret", delivery_id="abc")
    assert json.loads(body)["action"] == "created"
    assert headers["X-GitHub-Event"] == "issue_comment"
    assert headers["X-GitHub-Delivery"] == "abc"
    assert headers["X-Hub-Signature-256"] == sign("s3cret", body)
