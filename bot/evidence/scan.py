"""Stream a log of any size and yield only the lines worth classifying.

Python cannot afford to look at every line of a 1 GB log, so the scanner works on
large byte chunks: it lowercases a chunk once and lets the catalog's prefilter
regexes (literal anchors) jump from hit to hit in C. Only the lines holding a hit
are cut out and handed to the caller, in log order, with their 1-based line number
counted by `bytes.count`. Memory stays constant: one chunk, the carried-over
partial line (capped), and a ring of the last few lines for context.

While the caller holds a yielded candidate it may ask for the lines before it
(`context_before`) and register a list to be filled with the lines after it
(`follow`); both are capped like every kept line.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence

Reader = Callable[[int], bytes]

CHUNK_SIZE = 1 << 20
# Per-line cap of what is kept and classified. Failure messages start near the start
# of a line; pytest's 450 KB "Running N items in this shard: …" lines do not matter.
MAX_LINE_BYTES = 8192
# How many leading bytes are checked for NUL bytes to call the input binary.
_BINARY_SNIFF = 8192


class LineScanner:
    def __init__(
        self,
        read: Reader,
        prefilters: Sequence[re.Pattern[bytes]],
        *,
        context: int = 0,
        chunk_size: int = CHUNK_SIZE,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self._read = read
        self._prefilters = tuple(prefilters)
        self._context = max(context, 0)
        self._chunk_size = max(chunk_size, 1)
        self._max_line = max(max_line, 1)
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
        for body, stop, first_line_no, line_count in self._bodies():
            self._body, self._body_stop = body, stop
            self._fill_follow(0, first_line_no)
            counted_to, line_no = 0, first_line_no
            for start in self._hit_line_starts(body.lower(), stop):
                end = body.find(b"\n", start, stop)
                line_no += body.count(b"\n", counted_to, start)
                counted_to = start
                self._cur_start, self._cur_end, self._cur_line_no = start, end, line_no
                yield line_no, self._clip(start, end)
            self._remember_tail(first_line_no + line_count - 1)

    def _hit_line_starts(self, lowered: bytes, stop: int) -> list[int]:
        """Sorted start offsets of the lines in lowered[:stop] that hold a prefilter hit."""
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

    def _bodies(self) -> Iterator[tuple[bytes, int, int, int]]:
        """(data, stop, first line number, line count): data[:stop] holds whole lines."""
        carry = b""
        skipping = False  # inside an over-long line whose capped head is in `carry`
        next_line_no = 1
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
                    continue
                chunk, skipping = chunk[newline:], False
            data = carry + chunk if carry else chunk
            stop = data.rfind(b"\n") + 1
            carry = data[stop:]
            if len(carry) > self._max_line:
                carry, skipping = carry[: self._max_line], True
            if stop:
                lines = data.count(b"\n", 0, stop)
                self.lines += lines
                yield data, stop, next_line_no, lines
                next_line_no += lines
        if carry:  # a last line without a newline (truncated log)
            self.lines += 1
            yield carry + b"\n", len(carry) + 1, next_line_no, 1
