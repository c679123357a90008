"""A pull request's fetch kept within the review's limits, so a huge PR costs bounded memory.

The file listing is still read whole (names, statuses: the notice names what was left
out), but a file's patch is kept only while it fits the caps, in-scope files first as
the engine orders them: an in-scope file pushes out an out-of-scope one kept earlier.
A left-out file's patch is dropped as its page arrives and its texts are never fetched;
the texts of kept files are fetched in batches only while the byte budget lasts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.core.limits import ReviewLimits


def entry_wanted(entry: dict[str, Any], wants: Callable[[str], bool]) -> bool:
    previous = entry.get("previous_filename")
    return bool(wants(entry["filename"]) or (previous is not None and wants(previous)))


class EntryKeeper:
    """Which listed files a review reads; the patches of the others are dropped."""

    def __init__(self, limits: ReviewLimits, wants: Callable[[str], bool]) -> None:
        self.limits, self.wants = limits, wants
        self.chosen: list[dict[str, Any]] = []
        self.others: list[dict[str, Any]] = []
        self.capped: set[int] = set()  # id() of each left-out entry
        self.total = 0  # bytes of the kept patches, and of the texts fetched so far

    def _room(self, size: int) -> bool:
        return (len(self.chosen) + len(self.others) < self.limits.max_files
                and self.total + size <= self.limits.max_bytes)

    def drop(self, entry: dict[str, Any]) -> None:
        """Leave `entry` out of the review: forget its patch, remember its name."""
        self.total -= len(entry.pop("patch", None) or "") if id(entry) not in self.capped else 0
        self.capped.add(id(entry))

    def offer(self, entry: Any) -> None:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            return  # not a file entry: left to the caller's checks
        patch = entry.get("patch")
        size = len(patch) if isinstance(patch, str) else 0
        wanted = entry_wanted(entry, self.wants)
        while wanted and self.others and not self._room(size):
            self.drop(self.others.pop())
        if self._room(size):
            (self.chosen if wanted else self.others).append(entry)
            self.total += size
        else:
            entry.pop("patch", None)
            self.capped.add(id(entry))

    def spend(self, texts: int) -> None:
        """Count fetched texts against the byte budget."""
        self.total += texts

    @property
    def spent(self) -> bool:
        return self.total >= self.limits.max_bytes

    def is_capped(self, entry: dict[str, Any]) -> bool:
        return id(entry) in self.capped
