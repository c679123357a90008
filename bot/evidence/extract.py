"""Find the root-cause line of a CI log, streaming, in constant memory.

Every candidate line is classified by the catalog; the highest-ranked match is the
root cause, the earliest one on ties (repeats and reruns print the same failure
again later). A real crash therefore outranks the timeout, exit code or wrapper it
caused. Of the *surface* lines (timeouts, exit codes, wrappers, downstream
symptoms) ranked below the cause, the highest-ranked one after it is reported as
its surface symptom — or, when the harness printed its verdict first, the nearest
one before it. Every lower-ranked line after the cause is kept as a symptom it
explains, and repeats of the cause itself (retry loops, reruns) are counted
(`bot/evidence/chain.py`).

When nothing ranks as a cause, the strongest wrapper or surface line is reported all
the same, with a note that the failure itself is outside the log: an excerpt that
shows only `Engine core initialization failed. See root cause above` or an exit code
still tells a reader where to look, and says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from bot.evidence.chain import NO_CHAIN, Chain, ChainTracker
from bot.evidence.logstrip import cap, decode_line, strip_markers
from bot.evidence.patterns import Catalog, Match, load_catalog
from bot.evidence.scan import CHUNK_SIZE, LineScanner
from bot.evidence.signature import signature

DEFAULT_CONTEXT = 3
MAX_CONTEXT = 50
LINE_MAX_CHARS = 1000
CONTEXT_MAX_CHARS = 300


@dataclass(frozen=True)
class LogLine:
    line_no: int
    line: str


@dataclass(frozen=True)
class RootCause:
    category: str
    line_no: int
    line: str
    signature: str
    surface: LogLine | None
    context_before: tuple[LogLine, ...]
    context_after: tuple[LogLine, ...]
    pattern_id: str
    lines_scanned: int
    chain: Chain = NO_CHAIN
    # Set when the line is only a wrapper or surface symptom (nothing deeper was found).
    note: str | None = None

    @property
    def attempts(self) -> int:
        """How many times the log printed this failure (retry loops, reruns)."""
        return self.chain.occurrence_count

    def explain(self) -> str:
        """The chain in one line: symptoms ← root cause."""
        return self.chain.describe(self.category, self.line_no)

    @property
    def context(self) -> tuple[LogLine, ...]:
        return self.context_before + self.context_after


@dataclass(frozen=True)
class NoRootCause:
    reason: str
    surface: LogLine | None
    lines_scanned: int
    category: None = None


Result = RootCause | NoRootCause


@dataclass
class _Seen:
    rank: int
    line_no: int
    text: str


@dataclass
class _Best:
    seen: _Seen
    match: Match
    before: list[tuple[int, bytes]]
    after: list[tuple[int, bytes]]


def _to_line(line_no: int, raw: bytes, limit: int) -> LogLine:
    return LogLine(line_no, cap(strip_markers(decode_line(raw)), limit))


def extract_stream(
    read: Callable[[int], bytes],
    *,
    context: int = DEFAULT_CONTEXT,
    catalog: Catalog | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> Result:
    """Root cause of the log produced by `read(n)` (e.g. `file.read`), read to its end."""
    catalog = catalog or load_catalog()
    context = min(max(context, 0), MAX_CONTEXT)
    scanner = LineScanner(read, catalog.prefilter(), context=context, chunk_size=chunk_size)
    best: _Best | None = None
    best_signature = ""
    tracker = ChainTracker()
    surface_after: _Seen | None = None
    surface_before: _Seen | None = None  # nearest strongest surface before `best`
    strongest_surface: _Seen | None = None  # over everything seen so far

    for line_no, raw in scanner.candidates():
        text = strip_markers(decode_line(raw))
        match = catalog.classify(text)
        if match is None:
            continue
        seen = _Seen(match.pattern.rank, line_no, text)
        if best is None or seen.rank > best.seen.rank:
            best = _Best(seen, match, scanner.context_before(context), scanner.follow(context))
            best_signature = signature(match.pattern.category, text, match.key)
            tracker.restart(line_no)
            surface_before, surface_after = strongest_surface, None
        elif seen.rank < best.seen.rank:
            tracker.symptom(line_no, match.pattern.category, match.pattern.id, text)
            if match.pattern.surface and (surface_after is None or seen.rank > surface_after.rank):
                surface_after = seen
        elif signature(match.pattern.category, text, match.key) == best_signature:
            tracker.repeat(line_no)
        if match.pattern.surface and (
            strongest_surface is None or seen.rank >= strongest_surface.rank
        ):
            strongest_surface = seen

    if best is None:
        return NoRootCause(_no_cause_reason(scanner), None, scanner.lines)
    pattern = best.match.pattern
    note = None
    if best.seen.rank < catalog.min_cause_rank:
        note = (
            "only a wrapper or surface symptom was found; "
            "the failure itself is not in this log (look above the excerpt or in another step)"
        )
    return RootCause(
        category=pattern.category,
        line_no=best.seen.line_no,
        line=cap(best.seen.text, LINE_MAX_CHARS),
        signature=signature(pattern.category, best.seen.text, best.match.key),
        surface=_surface_line(surface_after or surface_before),
        context_before=tuple(_to_line(n, raw, CONTEXT_MAX_CHARS) for n, raw in best.before),
        context_after=tuple(_to_line(n, raw, CONTEXT_MAX_CHARS) for n, raw in best.after),
        pattern_id=pattern.id,
        lines_scanned=scanner.lines,
        chain=tracker.chain(),
        note=note,
    )


def _surface_line(seen: _Seen | None) -> LogLine | None:
    return None if seen is None else LogLine(seen.line_no, cap(seen.text, LINE_MAX_CHARS))


def _no_cause_reason(scanner: LineScanner) -> str:
    if scanner.bytes == 0:
        return "the log is empty"
    if scanner.looks_binary:
        return "the input looks binary, and no known failure line was found in it"
    return "no line matched a known failure pattern"


def extract_file(
    path: str | os.PathLike[str],
    *,
    context: int = DEFAULT_CONTEXT,
    catalog: Catalog | None = None,
) -> Result:
    """Root cause of the log file at `path` (raises OSError if it cannot be read)."""
    with open(path, "rb") as handle:
        return extract_binary(handle, context=context, catalog=catalog)


def extract_binary(
    stream: BinaryIO,
    *,
    context: int = DEFAULT_CONTEXT,
    catalog: Catalog | None = None,
) -> Result:
    return extract_stream(stream.read, context=context, catalog=catalog)


def extract_bytes(
    data: bytes,
    *,
    context: int = DEFAULT_CONTEXT,
    catalog: Catalog | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> Result:
    """Convenience for small in-memory logs (tests, webhook payloads)."""
    offset = 0

    def read(n: int) -> bytes:
        nonlocal offset
        piece = data[offset : offset + n]
        offset += len(piece)
        return piece

    return extract_stream(read, context=context, catalog=catalog, chunk_size=chunk_size)
