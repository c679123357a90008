"""Build `ChangedFile`s from what a source knows: a patch, full texts, or both."""

from __future__ import annotations

import difflib

from bot.core.diff import FilePatch, parse_file_patch
from bot.core.snapshot import ChangedFile

# Texts above this size are dropped (rules fall back to the patch) so a huge
# generated file cannot make the review slow or memory-hungry.
MAX_TEXT_BYTES = 2 * 1024 * 1024


def decode_text(data: bytes) -> tuple[str | None, str | None]:
    """(text, problem). Binary data yields no text; invalid UTF-8 is replaced, not fatal."""
    if b"\0" in data[:8192]:
        return None, "binary file"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        problem = f"not valid UTF-8 ({exc.reason} at byte {exc.start})"
        return data.decode("utf-8", "replace"), problem


def cap_text(text: str | None) -> tuple[str | None, str | None]:
    if text is not None and len(text) > MAX_TEXT_BYTES:
        return None, f"full text skipped: larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB"
    return text, None


def synthesize_patch(base: str | None, head: str | None) -> str:
    """A GitHub-style per-file patch (hunks only) between two texts."""
    lines = difflib.unified_diff(
        (base or "").splitlines(), (head or "").splitlines(), lineterm="", n=3
    )
    return "\n".join(line for line in lines if not line.startswith(("---", "+++")))


def from_patch(patch: FilePatch, base: str | None = None, head: str | None = None) -> ChangedFile:
    return ChangedFile(
        path=patch.path,
        status=patch.status,
        previous_path=patch.previous_path,
        hunks=tuple(patch.hunks),
        base_text=base,
        head_text=head,
        binary=patch.binary,
        patch_error=patch.error,
    )


def from_github_entry(
    filename: str,
    status: str,
    patch: str | None,
    previous_filename: str | None = None,
    base: str | None = None,
    head: str | None = None,
) -> ChangedFile:
    """A file as GitHub's list-PR-files API describes it, plus optional contents."""
    problems: list[str] = []
    base, problem = cap_text(base)
    problems += [problem] if problem else []
    head, problem = cap_text(head)
    problems += [problem] if problem else []
    missing = patch is None
    if patch is None and (base is not None or head is not None):
        patch = synthesize_patch(base, head)
    hunks, error = parse_file_patch(patch or "")
    if error:
        problems.append(f"patch: {error}")
    return ChangedFile(
        path=filename,
        status=status,
        previous_path=previous_filename,
        hunks=tuple(hunks),
        base_text=base,
        head_text=head,
        patch_error="; ".join(problems) or None,
        patch_missing=missing and base is None and head is None,
    )
