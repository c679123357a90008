"""How much one review reads at most (files, bytes), and the notice naming what it left out.

The caps come from three places, lowest wins: the operator's ceiling (the App's
settings, the CLI's flags), the repository's `limits:` config (it may only lower
them), and GitHub's own 3,000-file listing cap through the default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.core.snapshot import ChangedFile

_NAMED_SKIPS = 10  # the notice names this many skipped files, then counts the rest
# What any setting may ask for at most; past it a review would not fit a worker.
HARD_MAX_FILES = 1_000_000
HARD_MAX_BYTES = 4 * 1024**3
MIN_BYTES = 1024  # below a KiB not even one small file fits: surely a typo


@dataclass(frozen=True)
class ReviewLimits:
    """What one review reads at most. Over it, in-scope files are kept first (in the
    PR's order) and the notice names what was left out: never a silent gap."""

    max_files: int = 3000  # GitHub lists at most 3,000 files of a pull request
    max_bytes: int = 64 * 1024 * 1024  # diff lines plus full texts, summed over files

    def __post_init__(self) -> None:
        if not 1 <= self.max_files <= HARD_MAX_FILES:
            raise ValueError(f"max_files must be 1..{HARD_MAX_FILES}, got {self.max_files}")
        if not MIN_BYTES <= self.max_bytes <= HARD_MAX_BYTES:
            raise ValueError(
                f"max_bytes must be {MIN_BYTES}..{HARD_MAX_BYTES}, got {self.max_bytes}")


DEFAULT_LIMITS = ReviewLimits()


@dataclass(frozen=True)
class LimitsRequest:
    """A repository's `limits:` as written: None keeps the ceiling's value."""

    max_files: int | None = None
    max_bytes: int | None = None


def effective_limits(asked: LimitsRequest | None, ceiling: ReviewLimits
                     ) -> tuple[ReviewLimits, str | None]:
    """The caps a review uses, and a notice when the repository asked for more than
    the operator allows (the ceiling then applies)."""
    if asked is None:
        return ceiling, None
    files = asked.max_files if asked.max_files is not None else ceiling.max_files
    size = asked.max_bytes if asked.max_bytes is not None else ceiling.max_bytes
    over = [f"{name} {value} is above this installation's ceiling of {cap}"
            for name, value, cap in (("max_files", files, ceiling.max_files),
                                     ("max_bytes", size, ceiling.max_bytes)) if value > cap]
    limits = ReviewLimits(min(files, ceiling.max_files), min(size, ceiling.max_bytes))
    if not over:
        return limits, None
    return limits, f"limits: {'; '.join(over)}: the ceiling applies"


def file_size(changed: ChangedFile) -> int:
    """What a file costs against `ReviewLimits.max_bytes`."""
    lines = sum(hunk.text_size for hunk in changed.hunks)
    return lines + len(changed.base_text or "") + len(changed.head_text or "")


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit // 1024} KiB"


def cap_notice(limits: ReviewLimits, skipped: Sequence[str]) -> str:
    named = ", ".join(f"`{path}`" for path in skipped[:_NAMED_SKIPS])
    more = f" and {len(skipped) - _NAMED_SKIPS} more" if len(skipped) > _NAMED_SKIPS else ""
    return (f"Review capped at {limits.max_files} files and {_size(limits.max_bytes)} "
            f"of diff and text: {len(skipped)} file(s) not reviewed: {named}{more}.")
