"""Read a webhook body while checking its signature, in a bounded amount of memory.

The HMAC is updated chunk by chunk as the body arrives, and the bytes go to a spool
that keeps at most `SPOOL_BYTES` in memory and the rest in a temporary file. So a
flood of large unsigned or badly signed requests costs each of them one spool's worth
of memory (the kernel's page cache holds the rest, not this process), and nothing of
the body is looked at before the signature matched. GitHub caps a payload at 25 MB.
"""

from __future__ import annotations

import hashlib
import hmac
import tempfile

from aiohttp import web

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub does not deliver larger payloads
SPOOL_BYTES = 256 * 1024  # per request: above it, the body waits on disk
CHUNK_BYTES = 64 * 1024


class Rejected(Exception):
    """Why a body was refused before anything in it was trusted."""

    def __init__(self, status: int, outcome: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.outcome, self.reason = status, outcome, reason


def signature_for(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def signature_ok(secret: bytes, body: bytes, header: str | None) -> bool:
    if not header or not secret:
        return False
    # The one-shot `hmac.digest` skips the HMAC object: ~10 µs less on a 28 kB body.
    expected = b"sha256=" + hmac.digest(secret, body, "sha256").hex().encode()
    return hmac.compare_digest(expected, header.strip().encode("utf-8", "replace"))


def _matches(mac: hmac.HMAC, header: str) -> bool:
    expected = ("sha256=" + mac.hexdigest()).encode()
    return hmac.compare_digest(expected, header.strip().encode("utf-8", "replace"))


async def read_signed(request: web.Request, secret: bytes, max_bytes: int) -> bytes:
    """The body, once its `X-Hub-Signature-256` matched; `Rejected` otherwise."""
    header = request.headers.get("X-Hub-Signature-256")
    if not header or not secret:
        raise Rejected(401, "unauthorized", "missing X-Hub-Signature-256")
    too_large = Rejected(413, "too_large", f"payload over {max_bytes // (1024 * 1024)} MB")
    length = request.content_length
    if (length or 0) > max_bytes:
        raise too_large
    if length is not None and length <= SPOOL_BYTES:
        # A declared small body (GitHub's are ~30 kB) costs no more than the spool would.
        body = await request.read()
        if len(body) > max_bytes:
            raise too_large
        if not signature_ok(secret, body, header):
            raise Rejected(401, "unauthorized", "signature does not match")
        return body
    mac = hmac.new(secret, digestmod=hashlib.sha256)
    size = 0
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
        async for chunk in request.content.iter_chunked(CHUNK_BYTES):
            size += len(chunk)
            if size > max_bytes:
                raise too_large
            mac.update(chunk)
            spool.write(chunk)
        if not _matches(mac, header):
            raise Rejected(401, "unauthorized", "signature does not match")
        spool.seek(0)
        return spool.read()
