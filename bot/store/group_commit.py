"""Group commit for webhook intake: many concurrent inserts, one transaction.

Each request awaits `GroupCommitter.add()`, which resolves only after the
transaction holding its delivery (in the inbox, bot/store/inbox.py) has committed,
so a `202` is never sent for a delivery that is not on disk. Requests that arrive
while a batch is being written form the next batch, so the per-commit cost is
shared instead of paid per request.

A store whose commit waits on a server (PostgreSQL) sets `commit_off_loop` to N: up
to N batches are written at once on threads, one intake connection each, so the
server flushes their WAL together, while the loop goes on reading requests
(bench/bench_intake_wrk.py). Otherwise (SQLite) batches are written on the loop,
right after the callbacks that are ready in the current iteration have queued their
deliveries. Either way the loop, once per batch, settles the batch's futures and
calls `on_commit` (metrics, one log line).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from bot.store.base import NewDelivery, Store

_Waiter = tuple[NewDelivery, "asyncio.Future[bool]"]
# Called on the loop once per committed batch: the deliveries and, per delivery,
# whether it was new (False: its id was already stored).
OnCommit = Callable[[Sequence[NewDelivery], Sequence[bool]], None]


class GroupCommitter:
    def __init__(self, store: Store, *, max_batch: int = 512,
                 on_commit: OnCommit | None = None) -> None:
        self._store = store
        self._max_batch = max_batch
        self.on_commit = on_commit  # settable: the web app installs its own
        self._waiting: list[_Waiter] = []
        self._busy = False
        self.batches = 0  # commits made, for the benchmark and tests
        self.rows = 0
        self._writers: set[asyncio.Task[None]] = set()  # off-loop writers at work
        self._active = 0  # of them, not yet past their last look at `_waiting`

    async def add(self, delivery: NewDelivery) -> bool:
        """Queue `delivery` durably; False if its delivery id was already stored."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        self._waiting.append((delivery, future))
        writers = int(getattr(self._store, "commit_off_loop", 0))
        if writers:
            if self._active < writers:
                self._active += 1
                task = loop.create_task(self._flush_off_loop())
                self._writers.add(task)  # a strong reference while it runs
                task.add_done_callback(self._writers.discard)
        elif not self._busy:
            self._busy = True
            loop.call_soon(self._flush)
        return await future

    def close(self) -> None:
        """Nothing to release: kept so callers can close it like other resources."""

    def stats(self) -> dict[str, int]:
        """Figures for the shutdown log line."""
        return {"deliveries_committed": self.rows, "transactions": self.batches}

    def _take(self) -> list[_Waiter]:
        batch = self._waiting[: self._max_batch]
        del self._waiting[: self._max_batch]
        return batch

    def _flush(self) -> None:
        try:
            while self._waiting:
                batch = self._take()
                try:
                    results = self._store.add_to_inbox([d for d, _ in batch])
                except Exception as exc:
                    settle(batch, None, exc)
                else:
                    self._committed(batch, results)
        finally:
            self._busy = False

    async def _flush_off_loop(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            await asyncio.sleep(0)  # let the requests that are ready join this batch
            while self._waiting:
                batch = self._take()
                try:
                    results = await loop.run_in_executor(
                        None, self._store.add_to_inbox, [d for d, _ in batch])
                except Exception as exc:
                    settle(batch, None, exc)
                else:
                    self._committed(batch, results)
        finally:
            # In the same step as the last look at `_waiting`: a delivery added after
            # it finds a free writer slot. (Freed in the task's done callback, one loop
            # iteration later, it would find none and wait forever.)
            self._active -= 1

    def _committed(self, batch: Sequence[_Waiter], results: Sequence[bool]) -> None:
        self.batches += 1
        self.rows += len(batch)
        settle(batch, results, None)
        if self.on_commit is not None:
            self.on_commit([d for d, _ in batch], results)


def settle(
    batch: Sequence[_Waiter], results: Sequence[bool] | None, error: Exception | None
) -> None:
    """Answer each waiter of a batch: its row's result, or the batch's error."""
    for index, (_, future) in enumerate(batch):
        if future.done():  # the request was cancelled meanwhile; its row still counts
            continue
        if results is None:
            future.set_exception(error or RuntimeError("group commit failed"))
        else:
            future.set_result(results[index])
