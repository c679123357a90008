"""Every hidden marker the bot writes into GitHub, written AND parsed here.

The markers let the bot find its own summary comment and review bodies again, know
which findings it already posted (fingerprints) and recover its state after a lost
database. They are HTML comments, so GitHub does not show them. Users' text never
carries a live marker: `mdsafe` neutralises them in everything we quote.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from typing import Any

SUMMARY = "<!-- ci-stability:summary -->"
REVIEW = "<!-- ci-stability:review -->"
_STATE_RE = re.compile(r"<!-- ci-stability:state=([A-Za-z0-9+/=]+) -->")
_FP_RE = re.compile(r"<!-- ci-stability:fp=([0-9a-f]{6,64}) -->")


def fingerprint(fp: str) -> str:
    return f"<!-- ci-stability:fp={fp} -->"


def fingerprints_in(text: str) -> list[str]:
    return _FP_RE.findall(text)


def is_summary(body: str) -> bool:
    return SUMMARY in body


def is_review(body: str) -> bool:
    return REVIEW in body


def state(data: dict[str, Any]) -> str:
    """`data` packed into a hidden marker (compressed JSON, standard base64)."""
    packed = zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 9)
    # Standard base64 never contains "--", which would end the HTML comment.
    return f"<!-- ci-stability:state={base64.b64encode(packed).decode()} -->"


def state_in(body: str) -> Any:
    """The data of the state marker in `body`, or None when there is none or it is corrupt."""
    found = _STATE_RE.search(body)
    if found is None:
        return None
    try:
        return json.loads(zlib.decompress(base64.b64decode(found[1], validate=True)))
    except (binascii.Error, zlib.error, ValueError):
        return None


def without_state(body: str) -> str:
    """A summary comment without its hidden state."""
    return _STATE_RE.sub("", body).rstrip()


def command_reply(comment_id: int) -> str:
    """Marks the bot's reply to one comment, so a retry finds it instead of re-posting."""
    return f"<!-- ci-stability:reply={int(comment_id)} -->"


def defang(text: str) -> str:
    """`text` with no HTML comment opener left, so it can carry no marker at all."""
    return text.replace("<!--", "<\u200b!--")
