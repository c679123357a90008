"""Snapshot from a unified diff (a file, or stdin), as `git diff`/`format-patch` print it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from bot.core.diff import FilePatch, iter_unified_diff
from bot.core.limits import DEFAULT_LIMITS, ReviewLimits, file_size
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
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
    # Imported here: only a format-patch mail has a subject, and `email` costs ~7 ms.
    from email.header import decode_header, make_header

    try:
        return str(make_header(decode_header(subject)))
    except (ValueError, LookupError):
        return subject


class _Kept:
    """The files kept so far within `limits`: wanted files (in scope) may push out
    unwanted ones kept earlier, so the patch is read once and memory stays bounded."""

    def __init__(self, limits: ReviewLimits, wanted: Callable[[str], bool]) -> None:
        self.limits, self.wanted = limits, wanted
        # (order in the patch, file, size) for each kept file, wanted or not.
        self.chosen: list[tuple[int, ChangedFile, int]] = []
        self.others: list[tuple[int, ChangedFile, int]] = []
        self.skipped: list[tuple[int, str]] = []
        self.total = 0

    def offer(self, order: int, changed: ChangedFile) -> None:
        size, wanted = file_size(changed), self.wanted(changed.path)
        while wanted and self.others and not self._room(size):
            dropped = self.others.pop()
            self.total -= dropped[2]
            self.skipped.append((dropped[0], dropped[1].path))
        if self._room(size):
            (self.chosen if wanted else self.others).append((order, changed, size))
            self.total += size
        else:
            self.skipped.append((order, changed.path))

    def _room(self, size: int) -> bool:
        return (len(self.chosen) + len(self.others) < self.limits.max_files
                and self.total + size <= self.limits.max_bytes)

    def result(self) -> tuple[tuple[ChangedFile, ...], tuple[str, ...]]:
        kept = sorted(self.chosen + self.others, key=lambda entry: entry[0])
        files = tuple(changed for _, changed, _ in kept)
        # In-scope first, as the engine names what it leaves out.
        skipped = sorted(self.skipped, key=lambda item: (not self.wanted(item[1]), item[0]))
        return files, tuple(path for _, path in skipped)


def _keep(patches: Iterable[FilePatch], limits: ReviewLimits, wanted: Callable[[str], bool]
          ) -> tuple[tuple[ChangedFile, ...], tuple[str, ...], bool]:
    kept = _Kept(limits, wanted)
    any_file = False
    for order, patch in enumerate(patches):
        any_file = True
        kept.offer(order, from_patch(patch))
    return (*kept.result(), any_file)


def snapshot_from_patch(
    data: bytes, title: str = "", body: str = "", *,
    limits: ReviewLimits = DEFAULT_LIMITS, wanted: Callable[[str], bool] = lambda path: True,
) -> PullRequestSnapshot:
    """The patch as a snapshot of at most `limits` (in-scope files, by `wanted`, first);
    the files left out are in `capped`, for the engine's notice."""
    text, problem = decode_text(data)
    notices: list[tuple[str | None, str]] = []
    if text is None:
        text = data.decode("utf-8", "replace").replace("\0", "")
        notices.append((None, "patch contains NUL bytes; parsed what could be read"))
    elif problem:
        notices.append((None, f"patch is {problem}; undecodable bytes were replaced"))
    files, capped, any_file = _keep(iter_unified_diff(text), limits, wanted)
    if not any_file and text.strip():
        notices.append((None, "no file sections found: input does not look like a unified diff"))
    return PullRequestSnapshot(
        files=files,
        title=title or _format_patch_subject(text),
        body=body,
        notices=tuple(notices),
        capped=capped,
    )
