"""Snapshot from a unified diff (a file, or stdin), as `git diff`/`format-patch` print it."""

from __future__ import annotations

import re
from email.header import decode_header, make_header

from bot.core.diff import parse_unified_diff
from bot.core.snapshot import PullRequestSnapshot
from bot.sources.files import decode_text, from_patch

MAX_PATCH_BYTES = 512 * 1024 * 1024
_SUBJECT_RE = re.compile(r"^Subject: (?:\[PATCH[^\]]*\] )?(.*(?:\n[ \t].*)*)", re.M)


def _format_patch_subject(text: str) -> str:
    """The commit subject of a `git format-patch` mail, used as the PR title."""
    head = text[: text.find("\ndiff --git")] if "\ndiff --git" in text else text[:4096]
    match = _SUBJECT_RE.search(head)
    if not match:
        return ""
    subject = re.sub(r"\n[ \t]+", " ", match.group(1)).strip()
    try:
        return str(make_header(decode_header(subject)))
    except (ValueError, LookupError):
        return subject


def snapshot_from_patch(data: bytes, title: str = "", body: str = "") -> PullRequestSnapshot:
    text, problem = decode_text(data)
    notices: list[tuple[str | None, str]] = []
    if text is None:
        text = data.decode("utf-8", "replace").replace("\0", "")
        notices.append((None, "patch contains NUL bytes; parsed what could be read"))
    elif problem:
        notices.append((None, f"patch is {problem}; undecodable bytes were replaced"))
    files = tuple(from_patch(p) for p in parse_unified_diff(text))
    if not files and text.strip():
        notices.append((None, "no file sections found: input does not look like a unified diff"))
    return PullRequestSnapshot(
        files=files,
        title=title or _format_patch_subject(text),
        body=body,
        notices=tuple(notices),
    )
