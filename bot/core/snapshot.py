"""The frozen, I/O-free description of a pull request that every rule receives."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import chain, compress, repeat
from operator import is_, itemgetter
from typing import NamedTuple, cast

from bot.core.cached import cached_property
from bot.core.repo_view import RepoView


class LineKind(StrEnum):
    ADDED = "+"
    REMOVED = "-"
    CONTEXT = " "


class DiffLine(NamedTuple):
    # A NamedTuple rather than a dataclass: parsing builds one per diff line, and
    # tuple construction is several times cheaper on 200,000-line patches.
    kind: LineKind
    text: str
    old_no: int | None  # line number in the base text (None for added lines)
    new_no: int | None  # line number in the head text (None for removed lines)


_KIND = itemgetter(0)
_TEXT = itemgetter(1)
_NEW_NO = itemgetter(3)
_NO_NUMBER = frozenset({None})
_RUN_RES = {kind: re.compile(re.escape(kind.value) + "+") for kind in LineKind}


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str  # the text after the second @@, often the enclosing function
    lines: tuple[DiffLine, ...]

    @cached_property
    def derived(self) -> dict[str, object]:
        """Analyses of this hunk that several rules share (its two sides, say), by name;
        like `ChangedFile.derived`, it lives and dies with the hunk."""
        return {}

    @cached_property
    def text_size(self) -> int:
        """Characters of the lines' text, as `limits.file_size` counts them: asked when
        the patch is read and again when the review is capped, at C speed."""
        return sum(map(len, map(_TEXT, self.lines)))

    @property
    def added(self) -> tuple[DiffLine, ...]:
        return self._of_kind("added", LineKind.ADDED)

    @property
    def removed(self) -> tuple[DiffLine, ...]:
        return self._of_kind("removed", LineKind.REMOVED)

    @cached_property
    def kinds(self) -> str:
        """The lines' kinds as one string (`  --++ `): runs of a kind found at C speed."""
        return "".join(map(_KIND, self.lines))

    def _of_kind(self, name: str, kind: LineKind) -> tuple[DiffLine, ...]:
        found = self.derived.get(name)
        if found is None:
            # Without a Python-level loop per line: every rule asks, on every hunk. Most
            # hunks hold a few runs of each kind, taken as slices.
            lines = self.lines
            runs = [m.span() for m in _RUN_RES[kind].finditer(self.kinds)]
            if len(runs) <= 16:
                found = tuple(chain.from_iterable(lines[a:b] for a, b in runs))
            else:
                found = tuple(compress(lines, map(is_, map(_KIND, lines), repeat(kind))))
            self.derived[name] = found
        return cast(tuple[DiffLine, ...], found)


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str = "modified"  # added | removed | modified | renamed | copied | changed
    previous_path: str | None = None
    hunks: tuple[Hunk, ...] = ()
    base_text: str | None = None
    head_text: str | None = None
    surface: str | None = None
    binary: bool = False
    # Set when the patch of this file could not be read; rules still see the file.
    patch_error: str | None = None
    patch_missing: bool = False  # GitHub omits `patch` for very large diffs

    @cached_property
    def derived(self) -> dict[str, object]:
        """Analyses of this file that several rules share (a YAML scan, say), by name.

        Each is computed from this file's fields alone, so caching it here keeps the
        file a value; `dataclasses.replace` starts a new, empty cache.
        """
        return {}

    @cached_property
    def added_lines(self) -> tuple[DiffLine, ...]:
        return tuple(chain.from_iterable(hunk.added for hunk in self.hunks))

    @cached_property
    def removed_lines(self) -> tuple[DiffLine, ...]:
        return tuple(chain.from_iterable(hunk.removed for hunk in self.hunks))

    @cached_property
    def added_text(self) -> str:
        """The added lines joined by newlines: one substring test tells a rule whether
        any added line mentions its trigger words."""
        return "\n".join(map(_TEXT, self.added_lines))

    @cached_property
    def added_line_numbers(self) -> frozenset[int]:
        return frozenset(map(_NEW_NO, self.added_lines)) - _NO_NUMBER

    @cached_property
    def diff_line_numbers(self) -> frozenset[int]:
        """Head-side lines GitHub accepts review comments on (added or context)."""
        return frozenset(self.patch_head_lines)

    @cached_property
    def head_lines(self) -> tuple[str, ...] | None:
        return None if self.head_text is None else tuple(self.head_text.splitlines())

    @cached_property
    def base_lines(self) -> tuple[str, ...] | None:
        return None if self.base_text is None else tuple(self.base_text.splitlines())

    @cached_property
    def patch_head_lines(self) -> dict[int, str]:
        """Head-side lines the patch shows (added and context), by line number."""
        return {
            line.new_no: line.text
            for hunk in self.hunks
            for line in hunk.lines
            if line.new_no is not None
        }

    @cached_property
    def patch_base_lines(self) -> dict[int, str]:
        """Base-side lines the patch shows (removed and context), by line number; like
        `patch_head_lines`, shared read-only by every analysis that asks."""
        return {
            line.old_no: line.text
            for hunk in self.hunks
            for line in hunk.lines
            if line.old_no is not None
        }

    def head_line(self, number: int) -> str | None:
        """Text of a head-side line, from the full text or, failing that, the patch."""
        lines = self.head_lines
        if lines is not None:
            return lines[number - 1] if 0 < number <= len(lines) else None
        return self.patch_head_lines.get(number)

    def head_window(self, number: int, before: int, after: int) -> list[tuple[int, str]]:
        """Head-side lines around `number` that are known (full text or patch context)."""
        known: list[tuple[int, str]] = []
        for n in range(max(1, number - before), number + after + 1):
            text = self.head_line(n)
            if text is not None:
                known.append((n, text))
        return known


@dataclass(frozen=True)
class PullRequestSnapshot:
    files: tuple[ChangedFile, ...]
    repo: str | None = None
    number: int | None = None
    title: str = ""
    body: str = ""
    author: str | None = None
    base_ref: str | None = None
    base_sha: str | None = None
    head_ref: str | None = None
    head_sha: str | None = None
    labels: tuple[str, ...] = ()
    # Problems met while building the snapshot (unreadable input, caps hit).
    notices: tuple[tuple[str | None, str], ...] = field(default=())
    # Files the source left out to stay within the review's limits (paths, PR order):
    # the engine names them in its cap notice with any it leaves out itself.
    capped: tuple[str, ...] = ()
    # The repository at the base revision, when the source can offer it (see
    # bot/core/repo_view.py); not part of the snapshot's identity.
    repo_view: RepoView | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        """Title and body together, as PR-level rules read them."""
        return f"{self.title}\n{self.body}"

    def in_scope_files(self) -> tuple[ChangedFile, ...]:
        return tuple(f for f in self.files if f.surface is not None)
