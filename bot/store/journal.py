"""The intake journal: a verified delivery is durable once one `write()` returns.

Webhook intake appends each delivery as one length-prefixed record to a segment file
opened with O_APPEND, answers `202`, and a drain later moves the records into the
`deliveries` table (INSERT OR IGNORE, so replaying a record twice is harmless) and
deletes the segment. Why: a committed SQLite row costs ~50 µs of CPU (zlib + insert),
an append ~10 µs, and the drain can run when intake is quiet.

Durability: once `append()` returns, the record is in the kernel's page cache and
survives the process dying (kill -9, OOM) — the same guarantee as a WAL commit with
synchronous=NORMAL. It does not survive power loss or a kernel crash (no fsync); the
checksums then keep a damaged tail from being replayed as data.

Recovery: the process that holds the directory's lock owns the journal. A process
that finds segments and can take the lock (the owner died) replays them first. A record
cut short by a crash mid-write (a torn tail) was never acknowledged, so it is dropped;
bytes that fail their checksum are moved aside as `*.corrupt` for an operator, never
replayed and never deleted.

Layout: `<db>-intake/lock` and `<db>-intake/<seq>.journal`. Record = header
(magic, meta length, body length, CRC-32 of meta+body, CRC-32 of those 16 bytes),
meta (received_at, not_before, and the id, event, action, group key), raw body.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import struct
import threading
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final, Literal

from bot.store.base import NewDelivery, StoreError

log = logging.getLogger("bot.store.journal")

Inserter = Callable[[Sequence[NewDelivery]], list[bool]]
Ending = Literal["clean", "torn", "corrupt"]

MAGIC: Final = b"CSJ1"
SUFFIX: Final = ".journal"
_FIELDS = struct.Struct("<4sIII")  # magic, meta length, body length, CRC-32 of meta+body
_HEADER_CRC = struct.Struct("<I")  # CRC-32 of the fields, so a damaged length is caught
HEADER_SIZE: Final = _FIELDS.size + _HEADER_CRC.size
_META = struct.Struct("<ddIIII")
_ABSENT = 0xFFFFFFFF
MAX_META_BYTES = 64 * 1024  # ids and names are short; a larger value means a damaged header
MAX_BODY_BYTES = 64 * 1024 * 1024
DRAIN_BATCH = 512  # rows per transaction when the caller sets no limit
READ_BUFFER = 1024 * 1024
SEGMENT_BYTES = 16 * 1024 * 1024  # rotate at this size, so drained files go early
# Undrained records are also kept in memory up to this many payload bytes, so the
# drain does not read them back (a read and a CRC check cost ~20 µs of the ~70 µs
# a row); past it, whole segments are drained from disk.
KEEP_BYTES = 64 * 1024 * 1024


def journal_dir(db_path: str) -> Path | None:
    """Where the journal of the database at `db_path` lives (None: in-memory database)."""
    if not db_path or db_path == ":memory:" or db_path.startswith("file:"):
        return None
    return Path(db_path + "-intake")


# --- records ------------------------------------------------------------------------
def encode_record(d: NewDelivery) -> tuple[bytes, bytes]:
    """Header + meta, and the body (kept apart so `writev` need not copy 28 kB)."""
    parts = [s.encode() if s is not None else None
             for s in (d.delivery_id, d.event, d.action, d.group_key)]
    meta = _META.pack(d.received_at, d.not_before,
                      *(_ABSENT if p is None else len(p) for p in parts)
                      ) + b"".join(p for p in parts if p)
    fields = _FIELDS.pack(MAGIC, len(meta), len(d.payload),
                          zlib.crc32(d.payload, zlib.crc32(meta)))
    return fields + _HEADER_CRC.pack(zlib.crc32(fields)) + meta, d.payload


def _decode_meta(meta: bytes, body: bytes) -> NewDelivery:
    received_at, not_before, *lengths = _META.unpack_from(meta)
    values: list[str | None] = []
    at = _META.size
    for length in lengths:
        if length == _ABSENT:
            values.append(None)
            continue
        values.append(meta[at:at + length].decode())
        at += length
    if at != len(meta) or values[0] is None or values[1] is None:
        raise ValueError("meta lengths do not add up")
    return NewDelivery(values[0], values[1], values[2], body, received_at, not_before,
                       values[3])


@dataclass
class SegmentReader:
    """Reads one segment's records in order; `ending` says how the file ended."""

    path: Path
    ending: Ending | None = None  # set once the end is reached
    offset: int = 0  # bytes of valid records read so far
    _file: BinaryIO | None = None

    def read(self, limit: int) -> list[NewDelivery]:
        if self.ending is not None:
            return []
        if self._file is None:
            self._file = open(self.path, "rb", buffering=READ_BUFFER)  # noqa: SIM115
        records: list[NewDelivery] = []
        while len(records) < limit:
            record = self._next()
            if record is None:
                break
            records.append(record)
        return records

    def _next(self) -> NewDelivery | None:
        assert self._file is not None
        head = self._file.read(HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            self._end("clean" if not head else "torn")
            return None
        magic, meta_len, body_len, crc = _FIELDS.unpack_from(head)
        (head_crc,) = _HEADER_CRC.unpack_from(head, _FIELDS.size)
        if (magic != MAGIC or head_crc != zlib.crc32(head[:_FIELDS.size])
                or meta_len > MAX_META_BYTES or body_len > MAX_BODY_BYTES):
            self._end("corrupt")
            return None
        meta = self._file.read(meta_len)
        body = self._file.read(body_len)
        if len(meta) < meta_len or len(body) < body_len:
            self._end("torn")
            return None
        if zlib.crc32(body, zlib.crc32(meta)) != crc:
            self._end("corrupt")
            return None
        try:
            record = _decode_meta(meta, body)
        except (ValueError, struct.error):
            self._end("corrupt")
            return None
        self.offset += HEADER_SIZE + meta_len + body_len
        return record

    def _end(self, ending: Ending) -> None:
        self.ending = ending
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_segment(path: Path) -> tuple[list[NewDelivery], Ending]:
    """Every valid record of a segment, without changing anything (benchmarks, tools)."""
    reader = SegmentReader(path)
    records = reader.read(1 << 62)
    return records, reader.ending or "clean"


def segments(directory: Path) -> list[Path]:
    """Segment files in append order (names are zero-padded sequence numbers)."""
    try:
        return sorted(p for p in directory.iterdir() if p.name.endswith(SUFFIX))
    except FileNotFoundError:
        return []


# --- the journal ------------------------------------------------------------------------
@dataclass
class _Segment:
    path: Path
    count: int  # records in it; -1 for a segment left by another process (unknown)
    records: list[NewDelivery] | None = None  # all of them, else read from disk
    kept_bytes: int = 0
    drained: int = 0
    reader: SegmentReader | None = None


@dataclass
class _Active:
    path: Path
    fd: int
    size: int = 0
    count: int = 0
    records: list[NewDelivery] | None = field(default_factory=list)
    kept_bytes: int = 0


@dataclass
class DrainReport:
    moved: int = 0
    duplicates: int = 0  # records whose delivery id was already in the database
    dropped_torn_bytes: int = 0
    quarantined: list[Path] = field(default_factory=list)


class IntakeJournal:
    """Owned by one process (an exclusive flock); thread-safe; appends never block on
    SQLite unless a drain runs on another thread at the same time."""

    def __init__(self, directory: Path, lock_fd: int) -> None:
        self.directory = directory
        self._lock_fd = lock_fd
        self._mutex = threading.Lock()
        self._active: _Active | None = None
        self._sealed: deque[_Segment] = deque()
        self._next_seq = 1 + max((_seq(p) for p in directory.iterdir()), default=0)
        self._kept_bytes = 0  # payload bytes held in memory across segments
        self.appended = 0  # for tests and the benchmark

    @classmethod
    def open(cls, directory: Path, insert: Inserter) -> IntakeJournal:
        """Take ownership of `directory` and replay what a dead owner left into `insert`."""
        lock_fd = _lock(directory, blocking=False)
        if lock_fd is None:
            raise StoreError(
                f"the intake journal {str(directory)!r} is in use by another process: "
                "run one `serve` per database")
        journal = cls(directory, lock_fd)
        try:
            journal._sealed.extend(_Segment(p, -1) for p in segments(directory))
            journal.drain(insert)
        except BaseException:
            journal.close()
            raise
        return journal

    @property
    def backlog(self) -> int:
        """Records appended but not yet moved into the database (≥1 when unknown)."""
        active = self._active.count if self._active is not None else 0
        return active + sum(max(1, s.count - s.drained) if s.count < 0 else s.count - s.drained
                            for s in self._sealed)

    def append(self, d: NewDelivery) -> None:
        """Durable against the process dying once this returns; raises OSError otherwise
        (nothing of the record is left behind for the caller to worry about)."""
        head, body = encode_record(d)
        size = len(head) + len(body)
        with self._mutex:
            if self._lock_fd < 0:
                raise OSError(errno.EBADF, "the intake journal is closed")
            active = self._active or self._open_active()
            try:
                # One syscall in practice; O_APPEND makes it land whole at the end.
                written = os.writev(active.fd, (head, body))
                if written < size:  # disk full, or a signal arrived mid-write
                    _write_rest(active.fd, head + body, written)
            except BaseException:
                self._undo_partial(active)
                raise
            active.size += size
            active.count += 1
            self.appended += 1
            self._keep(active, d)
            if active.size >= SEGMENT_BYTES:
                self._seal_active()

    def drain(self, insert: Inserter, max_rows: int | None = None) -> DrainReport:
        """Move up to `max_rows` records (all when None) into `insert`, oldest first, in
        transactions of at most DRAIN_BATCH; a segment is deleted once fully moved."""
        report = DrainReport()
        with self._mutex:
            if not self._sealed and self._active is not None and self._active.count:
                self._seal_active()
            while self._sealed and (max_rows is None or report.moved < max_rows):
                room = DRAIN_BATCH if max_rows is None else min(DRAIN_BATCH,
                                                                max_rows - report.moved)
                self._drain_some(self._sealed[0], insert, room, report)
                if max_rows is None and not self._sealed and self._active is not None \
                        and self._active.count:
                    self._seal_active()
        if report.duplicates:
            log.info("journaled deliveries were already stored; not queued again",
                     extra={"count": report.duplicates})
        return report

    def close(self) -> None:
        """Stop appending; undrained segments stay on disk for the next owner."""
        with self._mutex:
            if self._active is not None:
                os.close(self._active.fd)
                self._active = None
            for segment in self._sealed:
                if segment.reader is not None:
                    segment.reader.close()
            if self._lock_fd >= 0:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = -1

    # --- internals -----------------------------------------------------------------------
    def _open_active(self) -> _Active:
        path = self.directory / f"{self._next_seq:012d}{SUFFIX}"
        self._next_seq += 1
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC,
                     0o600)
        self._active = _Active(path, fd)
        return self._active

    def _keep(self, active: _Active, d: NewDelivery) -> None:
        if active.records is None:
            return
        if self._kept_bytes + len(d.payload) > KEEP_BYTES:
            self._kept_bytes -= active.kept_bytes  # this segment drains from disk
            active.records, active.kept_bytes = None, 0
            return
        active.records.append(d)
        active.kept_bytes += len(d.payload)
        self._kept_bytes += len(d.payload)

    def _seal_active(self) -> None:
        active = self._active
        assert active is not None
        os.close(active.fd)
        self._sealed.append(_Segment(active.path, active.count, active.records,
                                     active.kept_bytes))
        self._active = None

    def _undo_partial(self, active: _Active) -> None:
        try:
            os.ftruncate(active.fd, active.size)
        except OSError:
            # Cannot cut the partial record off: seal the segment so it is the torn tail
            # of its file (dropped at drain) instead of garbage in front of later records.
            log.exception("could not truncate a failed journal append; sealing the segment")
            self._seal_active()

    def _drain_some(self, segment: _Segment, insert: Inserter, room: int,
                    report: DrainReport) -> None:
        if segment.records is not None:
            self._drain_kept(segment, insert, room, report)
            return
        reader = segment.reader or SegmentReader(segment.path)
        segment.reader = reader
        records = reader.read(room)
        if records:
            try:
                added = insert(records)
            except BaseException:
                # Re-read the whole segment next time: rows already moved are ignored.
                reader.close()
                segment.reader, segment.drained = None, 0
                raise
            segment.drained += len(records)
            report.moved += len(records)
            report.duplicates += added.count(False)
        if reader.ending is None:
            return
        self._sealed.popleft()
        self._retire(segment, reader, report)

    def _drain_kept(self, segment: _Segment, insert: Inserter, room: int,
                    report: DrainReport) -> None:
        assert segment.records is not None
        batch = segment.records[segment.drained:segment.drained + room]
        added = insert(batch)
        segment.drained += len(batch)
        report.moved += len(batch)
        report.duplicates += added.count(False)
        if segment.drained < len(segment.records):
            return
        self._kept_bytes -= segment.kept_bytes
        self._sealed.popleft()
        segment.path.unlink()

    def _retire(self, segment: _Segment, reader: SegmentReader, report: DrainReport) -> None:
        size = segment.path.stat().st_size
        if reader.ending == "corrupt":
            aside = segment.path.with_name(segment.path.name + ".corrupt")
            os.replace(segment.path, aside)
            report.quarantined.append(aside)
            log.error("intake journal segment has bytes that fail their checksum; the valid "
                      "records before them were queued, the rest was moved aside",
                      extra={"segment": str(aside), "valid_bytes": reader.offset,
                             "bad_bytes": size - reader.offset})
            return
        if reader.ending == "torn":
            report.dropped_torn_bytes += size - reader.offset
            log.warning("dropped a journal record cut short by a crash mid-write (it was "
                        "never acknowledged, so GitHub shows that delivery as failed)",
                        extra={"segment": str(segment.path), "bytes": size - reader.offset})
        segment.path.unlink()


def replay_abandoned(directory: Path, insert: Inserter) -> DrainReport | None:
    """Replay segments whose owner is gone; None when a live process owns the journal."""
    if not segments(directory):
        return DrainReport()
    lock_fd = _lock(directory, blocking=False)
    if lock_fd is None:
        return None
    journal = IntakeJournal(directory, lock_fd)
    try:
        journal._sealed.extend(_Segment(p, -1) for p in segments(directory))
        return journal.drain(insert)
    finally:
        journal.close()


def _lock(directory: Path, *, blocking: bool) -> int | None:
    directory.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(directory / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _write_rest(fd: int, record: bytes, written: int) -> None:
    view = memoryview(record)
    while written < len(record):
        written += os.write(fd, view[written:])


def _seq(path: Path) -> int:
    stem = path.name.split(".", 1)[0]
    return int(stem) if stem.isdigit() else 0
