"""Group commit in a child process: webhook intake's inbox writes off `serve`'s loop.

Opt-in (`CI_STABILITY_INTAKE_PROCESS=1`): it pays only where a core is free for the
writer. On a machine busier than its cores each hand-over (loop → writer → loop) waits
for the scheduler, and with at most as many deliveries in flight as there are open
requests, throughput fell to 45-80 % of the in-loop group commit's (bench/RESULTS-intake.md,
branch intake6).

`serve` is one event loop, and under load it is bound by its own CPU per request.
Writing the inbox (LZ4, the SQLite b-tree and WAL, psycopg's COPY) cost ~40 µs of
the ~55 µs a delivery costs `serve` beyond an HMAC-and-202 app (bench/RESULTS-intake.md).
A writer thread does not help: each GIL-releasing call (every row's LZ4, every SQLite
step) must win the GIL back from a busy loop. So the loop hands each verified delivery
to one writer process (`python -m bot.store.intake_process`) over a pipe, and the
writer, on its own core and connection, commits every delivery that arrived while its
previous commit was in flight as one transaction (`add_to_inbox`), then answers.

A `202` still means committed: `IntakeProcess.add()` resolves only when the writer
reports the transaction holding the delivery committed. The writer's SQLite connection
runs `synchronous=FULL` (one fsync of the WAL per batch, ~0.2 ms here, off the loop),
so an acknowledged delivery also survives the machine losing power, not only `serve`
being killed. A batch the store refuses fails every request in it (`StoreError`: the
web layer answers 503), none is lost silently. If the writer dies, every delivery it
had not confirmed fails the same way (it may still have been committed: a 503 for a
stored delivery only means a redelivery will be a duplicate), and the next delivery
starts a new writer. If `serve` dies, the writer reads end-of-file and exits.

Wire: loop → writer, per delivery, `_FRAME` (lengths, received_at, not_before) then
id, event, action, payload; writer → loop, per batch, `_REPLY` (b"A" + count, then one
byte per delivery, 1 = new) or (b"E" + count, then a length-prefixed message).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import logging
import os
import signal
import struct
import sys
from collections.abc import Sequence

from bot.store.base import NewDelivery, StoreError
from bot.store.db import is_postgres_url
from bot.store.group_commit import OnCommit, settle
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore

log = logging.getLogger("bot.store")

TARGET_ENV = "CI_STABILITY_INTAKE_DB"
_FRAME = struct.Struct("!IIIIdd")  # id, event, action (+1; 0 = None), payload; times
_REPLY = struct.Struct("!cI")
_READ_BYTES = 1 << 20
_PIPE_BYTES = 1 << 20  # Linux's default pipe-max-size: a writer's whole read at once
_F_SETPIPE_SZ = 1031
_Waiter = tuple[NewDelivery, "asyncio.Future[bool]"]


def encode(d: NewDelivery) -> tuple[bytes, bytes, bytes, bytes, bytes]:
    """The frame's parts (joined once per loop iteration, with the others queued)."""
    ident, event = d.delivery_id.encode(), d.event.encode()
    action = b"" if d.action is None else d.action.encode()
    head = _FRAME.pack(len(ident), len(event), 0 if d.action is None else len(action) + 1,
                       len(d.payload), d.received_at, d.not_before)
    return head, ident, event, action, d.payload


def decode(buffer: bytearray | bytes) -> tuple[list[NewDelivery], int]:
    """The complete frames at the start of `buffer`, and how many bytes they took."""
    out: list[NewDelivery] = []
    view, at = memoryview(buffer), 0
    while len(buffer) - at >= _FRAME.size:
        n_id, n_event, n_action, n_payload, received, not_before = _FRAME.unpack_from(buffer, at)
        body = at + _FRAME.size
        end = body + n_id + n_event + max(n_action - 1, 0) + n_payload
        if end > len(buffer):
            break
        ident = str(view[body:body + n_id], "utf-8")
        body += n_id
        event = str(view[body:body + n_event], "utf-8")
        body += n_event
        action = None if n_action == 0 else str(view[body:body + n_action - 1], "utf-8")
        body += max(n_action - 1, 0)
        out.append(NewDelivery(ident, event, action, bytes(view[body:end]), received,
                               not_before))
        at = end
    view.release()
    return out, at


class IntakeProcess:
    """`GroupCommitter`'s face (`add`, `on_commit`, `stats`), the batches written by a
    writer process on `target` (a SQLite path or a PostgreSQL URL)."""

    def __init__(self, target: str, on_commit: OnCommit | None = None) -> None:
        self._target = target
        self.on_commit = on_commit
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()
        self._inflight: collections.deque[_Waiter] = collections.deque()
        self._out: list[bytes] = []
        self._send_scheduled = False
        self.batches = 0
        self.rows = 0
        self.restarts = 0

    @property
    def pid(self) -> int | None:
        """The writer's process id while one runs."""
        return None if self._proc is None else self._proc.pid

    async def start(self) -> None:
        async with self._starting:
            if self._proc is not None:
                return
            env = {**os.environ, TARGET_ENV: self._target}
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.store.intake_process", env=env,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
            assert proc.stdin is not None and proc.stdout is not None
            pipe = proc.stdin.get_extra_info("pipe")
            with contextlib.suppress(OSError, AttributeError):  # a bigger pipe: fewer
                fcntl.fcntl(pipe.fileno(), _F_SETPIPE_SZ, _PIPE_BYTES)  # writer wake-ups
            self._proc = proc
            self._reader = asyncio.get_running_loop().create_task(self._read_replies(proc))
            self.restarts += 1

    async def add(self, delivery: NewDelivery) -> bool:
        """Queue `delivery` durably; False if its delivery id was already stored."""
        if self._proc is None:
            await self.start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        self._inflight.append((delivery, future))
        self._out.extend(encode(delivery))
        if not self._send_scheduled:
            self._send_scheduled = True  # one write for what this loop iteration queued
            loop.call_soon(self._send)
        return await future

    def _send(self) -> None:
        self._send_scheduled = False
        data, self._out = b"".join(self._out), []
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            return  # the reader fails what is in flight when the writer's end closes
        proc.stdin.write(data)

    async def _read_replies(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        try:
            while True:
                kind, count = _REPLY.unpack(await proc.stdout.readexactly(_REPLY.size))
                if kind == b"A":
                    flags = await proc.stdout.readexactly(count)
                    self._settle(count, [bool(b) for b in flags], None)
                elif kind != b"E":
                    raise ValueError(f"unknown reply {kind!r}")
                else:
                    (size,) = struct.unpack("!I", await proc.stdout.readexactly(4))
                    why = (await proc.stdout.readexactly(size)).decode("utf-8", "replace")
                    log.error("intake batch not committed", extra={"deliveries": count,
                                                                   "error": why})
                    self._settle(count, None, StoreError(why))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception:  # a reader that died would leave every request waiting
            log.exception("intake writer's replies unreadable; stopping it")
            proc.kill()
        returncode = await proc.wait()
        if self._proc is proc:
            self._proc = None
            self._out = []
        if self._inflight:
            log.error("intake writer exited", extra={"returncode": returncode,
                                                     "unconfirmed": len(self._inflight)})
        self._settle(len(self._inflight), None,
                     StoreError(f"intake writer exited ({returncode})"))

    def _settle(self, count: int, added: Sequence[bool] | None,
                error: Exception | None) -> None:
        batch = [self._inflight.popleft() for _ in range(min(count, len(self._inflight)))]
        settle(batch, added, error or StoreError("intake batch failed"))
        if added is not None:
            self.batches += 1
            self.rows += len(batch)
            if self.on_commit is not None:
                try:  # metrics and a log line: never worth the reader's life
                    self.on_commit([d for d, _ in batch], added)
                except Exception:
                    log.exception("intake on_commit failed")

    async def aclose(self) -> None:
        """End-of-file to the writer: it answers what it has and exits."""
        proc = self._proc
        if proc is None:
            return
        if self._out:
            self._send()
        assert proc.stdin is not None
        proc.stdin.close()
        if self._reader is not None:
            await self._reader

    def close(self) -> None:
        """For `GroupCommitter`'s callers: the writer is stopped by `aclose`."""

    def stats(self) -> dict[str, int]:
        return {"deliveries_committed": self.rows, "transactions": self.batches,
                "writer_starts": self.restarts}


def intake_target(store: object) -> str | None:
    """The database a writer process can open for `store`; None for another kind."""
    if isinstance(store, PostgresStore):
        return store.url
    return store.path if isinstance(store, SqliteStore) else None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def run_writer(target: str, fd_in: int = 0, fd_out: int = 1) -> None:
    """The writer's loop: read what has arrived, commit it as one batch, answer."""
    # Off the loop, the fsync no longer stalls requests: every committed batch is on
    # disk, not only in the page cache.
    store = PostgresStore(target) if is_postgres_url(target) else SqliteStore(target, "FULL")
    # The replies' channel is private: anything else printing to stdout goes to stderr.
    fd_out, _ = os.dup(fd_out), os.dup2(2, fd_out)
    try:
        if not store.db.postgres:
            # The parent's store copies the WAL into the file
            # (SqliteStore.offload_checkpoints), so no commit here does.
            store.db.execute("PRAGMA wal_autocheckpoint = 0")
        buffer = bytearray()
        while chunk := os.read(fd_in, _READ_BYTES):
            buffer += chunk
            batch, used = decode(buffer)
            del buffer[:used]
            if not batch:
                continue
            try:
                added = store.add_to_inbox(batch)
            except Exception as exc:  # every request in the batch is answered 5xx
                why = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")[:4096]
                _write_all(fd_out, _REPLY.pack(b"E", len(batch))
                           + struct.pack("!I", len(why)) + why)
                continue
            _write_all(fd_out, _REPLY.pack(b"A", len(batch)) + bytes(added))
    finally:
        store.close()


def main() -> int:
    # The parent drives shutdown (end-of-file on stdin): a terminal's Ctrl-C or a
    # SIGTERM to the process group must not cut a batch short.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    target = os.environ.get(TARGET_ENV)
    if not target:
        sys.stderr.write(f"intake writer: {TARGET_ENV} is not set\n")
        return 2
    run_writer(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
