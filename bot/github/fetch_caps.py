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
    """Which listed files a review reads. `entries` is the listing as offered, except that
    a left-out file is a copy without its patch: offered answers are never changed (the
    ETag cache may hand the same objects to the next review)."""

    def __init__(self, limits: ReviewLimits, wants: Callable[[str], bool]) -> None:
        self.limits, self.wants = limits, wants
        self.entries: list[Any] = []
        self.kept = 0
        self.others: list[int] = []  # indexes of kept out-of-scope entries
        self.capped: set[int] = set()  # id() of each left-out entry (alive in `entries`)
        self.total = 0  # bytes of the kept patches, and of the texts fetched so far

    def _room(self, size: int) -> bool:
        return self.kept < self.limits.max_files and self.total + size <= self.limits.max_bytes

    def _leave_out(self, index: int) -> None:
        trimmed = {k: v for k, v in self.entries[index].items() if k != "patch"}
        self.entries[index] = trimmed
        self.capped.add(id(trimmed))

    def drop(self, entry: dict[str, Any]) -> None:
        """Leave a kept `entry` out after all (its texts no longer fit the budget)."""
        if id(entry) not in self.capped:
            self.total -= len(entry.get("patch") or "")
            self.capped.add(id(entry))

    def offer(self, entry: Any) -> None:
        self.entries.append(entry)
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            return  # not a file entry: left to the caller's checks
        patch = entry.get("patch")
        size = len(patch) if isinstance(patch, str) else 0
        wanted = entry_wanted(entry, self.wants)
        while wanted and self.others and not self._room(size):
            index = self.others.pop()
            self.total -= len(self.entries[index].get("patch") or "")
            self.kept -= 1
            self._leave_out(index)
        if self._room(size):
            self.kept += 1
            self.total += size
            if not wanted:
                self.others.append(len(self.entries) - 1)
        else:
            self._leave_out(len(self.entries) - 1)

    def spend(self, texts: int) -> None:
        """Count fetched texts against the byte budget."""
        self.total += texts

    @property
    def spent(self) -> bool:
        return self.total >= self.limits.max_bytes

    def is_capped(self, entry: Any) -> bool:
        return id(entry) in self.capped
