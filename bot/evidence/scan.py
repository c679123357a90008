"""Stream a log of any size and yield only the lines worth classifying.

Python cannot afford to look at every line of a 1 GB log, so the scanner works on
large byte chunks and a line finder jumps from prefilter hit to hit in C: Hyperscan
(`multimatch.HyperscanLineFinder`) or, where it is missing, `RegexLineFinder`. Only
the lines holding a hit are cut out and handed to the caller, in log order, with
their 1-based line number counted by `bytes.count` (once per byte). Memory stays
constant: one chunk, the carried-over partial line (capped), and a ring of the last
few lines for context.

While the caller holds a yielded candidate it may ask for the lines before it
(`context_before`) and register a list to be filled with the lines after it
(`follow`); both are capped like every kept line.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from functools import cache

from bot.evidence.multimatch import (
    BranchFilter,
    Engine,
    EngineUnavailable,
    HyperscanLineFinder,
    LineFinder,
    Re2BranchFilter,
    hyperscan_finder,
)
from bot.evidence.patterns import Catalog, Literal

Reader = Callable[[int], bytes]

CHUNK_SIZE = 1 << 20
# Per-line cap of what is kept and classified. Failure messages start near the start
# of a line; pytest's 450 KB "Running N items in this shard: …" lines do not matter.
MAX_LINE_BYTES = 8192
# A line is searched whole up to this size even when it straddles chunks; only the
# tail of a longer one goes unsearched (counted in `skipped_bytes`, and reported).
MAX_CARRY_BYTES = 4 << 20
# How many leading bytes are checked for NUL bytes to call the input binary.
_BINARY_SNIFF = 8192


class RegexLineFinder:
    """The pure-Python finder: Python's engine over the lowercased chunk.

    One regex per first character of the literals: a regex with a literal prefix is
    searched with a fast byte loop, an alternation starting with a character set
    about ten times slower (`Catalog.prefilter`).
    """

    name = "python"

    def __init__(self, prefilters: Sequence[re.Pattern[bytes]]) -> None:
        self._prefilters = tuple(prefilters)

    def __call__(self, body: bytes, stop: int) -> list[int]:
        lowered = body.lower()
        starts: set[int] = set()
        for prefilter in self._prefilters:
            search = prefilter.search
            hit = search(lowered, 0, stop)
            while hit is not None:
                start = lowered.rfind(b"\n", 0, hit.start()) + 1
                starts.add(start)
                # The rest of this line needs no second look by this prefilter.
                end = lowered.find(b"\n", hit.end() - 1, stop)
                hit = search(lowered, end + 1, stop)
        return sorted(starts)


@cache
def _hyperscan_for(literals: tuple[Literal, ...]) -> HyperscanLineFinder:
    return hyperscan_finder((w.text, w.not_followed_by, w.not_preceded_by) for w in literals)


@cache
def _re2_for(regexes: tuple[str, ...]) -> Re2BranchFilter:
    return Re2BranchFilter(regexes)


def engines_for(catalog: Catalog, engine: Engine = "auto"
                ) -> tuple[LineFinder, BranchFilter | None]:
    """The line finder and branch filter: compiled where installed (or demanded)."""
    if engine != "python":
        try:
            return (_hyperscan_for(catalog.prefilter_literals),
                    _re2_for(catalog.branch_regexes()))
        except EngineUnavailable:
            if engine == "compiled":
                raise
    return RegexLineFinder(catalog.prefilter()), None


class LineScanner:
    def __init__(
        self,
        read: Reader,
        finder: LineFinder,
        *,
        context: int = 0,
        chunk_size: int = CHUNK_SIZE,
        max_line: int = MAX_LINE_BYTES,
        max_carry: int = MAX_CARRY_BYTES,
    ) -> None:
        self._read = read
        self._finder = finder
        self._context = max(context, 0)
        self._chunk_size = max(chunk_size, 1)
        self._max_line = max(max_line, 1)
        self._max_carry = max(max_carry, self._max_line)
        # Last lines of earlier bodies, for context that reaches back across a chunk.
        self._ring: deque[tuple[int, bytes]] = deque(maxlen=self._context)
        self._body = b""
        self._body_stop = 0
        self._cur_start = 0
        self._cur_end = 0
        self._cur_line_no = 0
        self._follow: list[tuple[int, bytes]] | None = None
        self._follow_need = 0
        self.lines = 0
        self.bytes = 0
        self.looks_binary = False
        # What a line cap hid: bytes of over-long lines never searched (the tail of a
        # line that straddles a chunk), and candidate lines classified on their head.
        self.skipped_bytes = 0
        self.long_lines = 0
        self.clipped_lines = 0

    # -- context --------------------------------------------------------------
    def context_before(self, n: int) -> list[tuple[int, bytes]]:
        """Up to `n` lines before the current candidate, oldest first."""
        n = min(n, self._context)
        lines: list[tuple[int, bytes]] = []
        pos = self._cur_start
        line_no = self._cur_line_no
        while len(lines) < n and pos > 0:
            start = self._body.rfind(b"\n", 0, pos - 1) + 1
            line_no -= 1
            lines.append((line_no, self._clip(start, pos - 1)))
            pos = start
        if len(lines) < n:
            older = list(self._ring)[-(n - len(lines)) :] if n > len(lines) else []
            lines.extend(reversed(older))
        lines.reverse()
        return lines

    def follow(self, n: int) -> list[tuple[int, bytes]]:
        """A list the scanner fills with the next `n` lines after the current candidate."""
        self._follow = []
        self._follow_need = min(n, self._context)
        self._fill_follow(self._cur_end + 1, self._cur_line_no + 1)
        return self._follow

    def _fill_follow(self, pos: int, line_no: int) -> None:
        follow = self._follow
        while follow is not None and len(follow) < self._follow_need and pos < self._body_stop:
            end = self._body.find(b"\n", pos, self._body_stop)
            follow.append((line_no, self._clip(pos, end)))
            pos, line_no = end + 1, line_no + 1

    def _clip(self, start: int, end: int) -> bytes:
        return self._body[start : min(end, start + self._max_line)]

    # -- scanning ---------------------------------------------------------------
    def candidates(self) -> Iterator[tuple[int, bytes]]:
        """(line number, line bytes capped) for every line containing an anchor."""
        next_line_no = 1
        for body, stop in self._bodies():
            self._body, self._body_stop = body, stop
            self._fill_follow(0, next_line_no)
            counted_to, line_no = 0, next_line_no
            for start in self._finder(body, stop):
                end = body.find(b"\n", start, stop)
                line_no += body.count(b"\n", counted_to, start)
                counted_to = start
                self._cur_start, self._cur_end, self._cur_line_no = start, end, line_no
                if end - start > self._max_line:
                    self.clipped_lines += 1
                yield line_no, self._clip(start, end)
            # Each byte is counted once: up to the last hit above, the rest here.
            line_no += body.count(b"\n", counted_to, stop)
            self.lines += line_no - next_line_no
            next_line_no = line_no
            self._remember_tail(line_no - 1)

    def _remember_tail(self, last_line_no: int) -> None:
        if not self._context:
            return
        tail: list[tuple[int, bytes]] = []
        end = self._body_stop - 1
        line_no = last_line_no
        while len(tail) < self._context and end >= 0:
            start = self._body.rfind(b"\n", 0, end) + 1
            tail.append((line_no, self._clip(start, end)))
            end, line_no = start - 1, line_no - 1
        self._ring.extend(reversed(tail))

    def _bodies(self) -> Iterator[tuple[bytes, int]]:
        """(data, stop): data[:stop] holds whole lines, each ending in a newline."""
        carry = b""
        skipping = False  # inside an over-long line whose capped head is in `carry`
        while True:
            chunk = self._read(self._chunk_size)
            if not chunk:
                break
            if self.bytes < _BINARY_SNIFF and b"\x00" in chunk[: _BINARY_SNIFF - self.bytes]:
                self.looks_binary = True
            self.bytes += len(chunk)
            if skipping:
                newline = chunk.find(b"\n")
                if newline == -1:
                    self.skipped_bytes += len(chunk)
                    continue
                self.skipped_bytes += newline
                chunk, skipping = chunk[newline:], False
            data = carry + chunk if carry else chunk
            stop = data.rfind(b"\n") + 1
            carry = data[stop:]
            if len(carry) > self._max_carry:
                self.skipped_bytes += len(carry) - self._max_carry
                self.long_lines += 1
                carry, skipping = carry[: self._max_carry], True
            if stop:
                yield data, stop
        if carry:  # a last line without a newline (truncated log)
            yield carry + b"\n", len(carry) + 1
