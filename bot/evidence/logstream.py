"""Feed a job log, as it downloads, into the extractor — with a size cap and a tee.

The extractor pulls bytes with a blocking `read(n)`; HTTP clients push them
asynchronously. `analyse_chunks` joins the two through a small bounded pipe and runs
the extractor in a worker thread, so a log of any size passes through in constant
memory and never blocks the event loop. On the way through, `MentionCollector`
keeps the file names and pytest node ids the log mentions (bounded), which is what
relevance later matches a pull request's changed files against: the root-cause
line of a server-start OOM rarely names the eval config that triggered it.
"""

from __future__ import annotations

import asyncio
import queue
import re
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from bot.evidence.extract import Result, RootCause, extract_stream

DEFAULT_MAX_LOG_BYTES = 256 * 1024 * 1024
MAX_MENTIONS = 400
# Pytest's own verdict lines are worth keeping even after the budget is spent.
MAX_VERDICT_MENTIONS = 100
MENTION_MAX_CHARS = 200
_CARRY_MAX = 512

# A mention is found from its extension outwards: one cheap regex jumps between
# `.py` / `.yaml` / … hits, the path is read backwards from there and a pytest node
# id suffix (`::TestX::test_y[param-id]`) forwards. Scanning stops after a fixed
# number of hits, so a traceback-heavy log costs no more than a quiet one.
_EXTENSION = re.compile(rb"\.(?:py|ya?ml|json|sh|toml|txt|cfg)(?![\w/-])")
_PATH_BACKWARDS = re.compile(rb"[\w./-]{1,200}")
_NODE_SUFFIX = re.compile(rb"(?:::[\w.-]{1,120}){0,3}(?:\[[^\]\s]{1,120}\])?")
_VERDICT = re.compile(rb"(?:FAILED|ERROR|PASSED|XFAIL|SKIPPED) (\S{1,300}::\S{1,300})")
_NOISE = (b"site-packages/", b"dist-packages/", b"/usr/lib/", b"<frozen", b"/lib/python")
MAX_EXAMINED = 20_000


class MentionCollector:
    """Distinct file names / node ids seen in a byte stream, first come first kept."""

    def __init__(self, limit: int = MAX_MENTIONS) -> None:
        self._limit = limit
        self._seen: dict[str, None] = {}
        self._verdicts = 0
        self._examined = 0
        self._carry = b""

    def feed(self, chunk: bytes) -> None:
        data = self._carry + chunk
        # Whole lines only (a verdict needs its `FAILED ` prefix); an over-long line is
        # cut at its last blank instead, and only a bounded tail is carried over.
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            if len(data) < _CARRY_MAX:
                self._carry = data
                return
            cut = max(data.rfind(b" "), data.rfind(b"\t")) + 1 or len(data)
        self._carry = data[cut:][-_CARRY_MAX:]
        self._scan(data[:cut])

    def finish(self) -> tuple[str, ...]:
        if self._carry:
            self._scan(self._carry)
            self._carry = b""
        return tuple(self._seen)

    def _scan(self, body: bytes) -> None:
        for hit in _EXTENSION.finditer(body):
            if len(self._seen) >= self._limit or self._examined >= MAX_EXAMINED:
                break
            self._examined += 1
            start, end = hit.start(), hit.end()
            left = _PATH_BACKWARDS.match(body[max(start - 200, 0):start][::-1])
            if left is None:
                continue  # a bare extension, not a file name
            suffix = _NODE_SUFFIX.match(body, end)
            self._add(body[start - left.end(): suffix.end() if suffix else end], verdict=False)
        if self._verdicts < MAX_VERDICT_MENTIONS and b"::" in body:
            for match in _VERDICT.finditer(body):
                self._add(match.group(1), verdict=True)
                if self._verdicts >= MAX_VERDICT_MENTIONS:
                    break

    def _add(self, raw: bytes, *, verdict: bool) -> None:
        if any(noise in raw for noise in _NOISE):
            return
        text = raw.decode("utf-8", "replace").strip("'\",:;()")[:MENTION_MAX_CHARS]
        if not text or text in self._seen:
            return
        if verdict:
            self._verdicts += 1
        elif len(self._seen) >= self._limit:
            return
        self._seen[text] = None


@dataclass(frozen=True)
class LogAnalysis:
    result: Result
    mentions: tuple[str, ...]
    bytes_read: int
    truncated: bool

    def job_fields(self) -> dict[str, Any]:
        """The `JobRecord` fields this analysis fills in."""
        result = self.result
        surface = result.surface
        note = None
        if self.truncated:
            note = f"only the first {self.bytes_read // (1024 * 1024)} MiB of the log were read"
        fields: dict[str, Any] = {
            "mentions": self.mentions,
            "surface": surface.line if surface else None,
            "surface_line_no": surface.line_no if surface else None,
        }
        if isinstance(result, RootCause):
            fields.update(
                category=result.category, line=result.line, line_no=result.line_no,
                signature=result.signature,
                context=tuple(line.line for line in result.context),
                log_note="; ".join(n for n in (result.note, note) if n) or None,
                chain=result.explain(),
            )
        else:
            reason = f"no root cause found: {result.reason}"
            fields["log_note"] = f"{reason}; {note}" if note else reason
        return fields


def analyse_read(read: Callable[[int], bytes], *, max_bytes: int = DEFAULT_MAX_LOG_BYTES
                 ) -> LogAnalysis:
    """Analyse the log produced by a blocking `read(n)`, reading at most `max_bytes`."""
    collector = MentionCollector()
    total = 0
    truncated = False

    def capped_read(n: int) -> bytes:
        nonlocal total, truncated
        if total >= max_bytes:
            truncated = truncated or bool(read(1))
            return b""
        chunk = read(min(n, max_bytes - total))
        total += len(chunk)
        collector.feed(chunk)
        return chunk

    result = extract_stream(capped_read)
    return LogAnalysis(result, collector.finish(), total, truncated)


class _Pipe:
    """A bounded hand-over from the event loop (producer) to a worker thread (reader)."""

    def __init__(self, depth: int = 8) -> None:
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=depth)
        self._buffer = bytearray()
        self._closed = threading.Event()
        self._eof = False

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n and not self._eof:
            try:
                item = self._queue.get(timeout=0.1)
            except queue.Empty:
                if self._closed.is_set() and self._queue.empty():
                    self._eof = True
                continue
            if item is None:
                self._eof = True
            else:
                self._buffer += item
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out

    def offer(self, item: bytes | None) -> bool:
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            return False
        return True

    def close(self) -> None:
        self._closed.set()


async def analyse_chunks(chunks: AsyncIterator[bytes], *,
                         max_bytes: int = DEFAULT_MAX_LOG_BYTES) -> LogAnalysis:
    """Analyse a log arriving as async byte chunks (e.g. `response.content.iter_chunked`)."""
    pipe = _Pipe()
    worker = asyncio.ensure_future(asyncio.to_thread(analyse_read, pipe.read,
                                                     max_bytes=max_bytes))
    try:
        async for chunk in chunks:
            # The worker stops early once the cap is reached; stop downloading then.
            while not pipe.offer(chunk):
                if worker.done():
                    break
                await asyncio.sleep(0.002)
            if worker.done():
                break
        while not worker.done() and not pipe.offer(None):
            await asyncio.sleep(0.002)
    finally:
        pipe.close()
    return await worker
