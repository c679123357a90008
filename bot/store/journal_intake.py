"""Webhook intake through the journal: append, answer, drain into SQLite later.

`JournalIntake.add()` appends a verified delivery to the store's `IntakeJournal` and
returns as soon as the record is written (durable against the process dying), so the
web handler can answer `202` without waiting for SQLite. A timer on the event loop then
moves the records into the `deliveries` table according to `DrainPolicy`.

Duplicates: a redelivered X-GitHub-Delivery id is recognised from the ids accepted
recently by this process (which covers every id still only in the journal) or, after a
restart, by the database; the drain's INSERT OR IGNORE is the last line, so a delivery
is never queued twice even if both missed.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass

from bot.store.base import JournaledStore, NewDelivery
from bot.store.journal import DrainReport, IntakeJournal

log = logging.getLogger("bot.store.intake")


@dataclass(frozen=True)
class DrainPolicy:
    """When journaled deliveries move into SQLite. A drain costs ~55 µs of CPU a row
    (zlib + insert) on the same event loop as intake, so during a burst it waits until
    requests stop for `interval`, but never longer than `max_delay` or past
    `max_backlog` records; then it runs `batch` rows per loop turn so requests keep
    being served in between. Queue reads (claim, get_delivery, next_due…) drain first
    regardless, so an idle worker sees a delivery at once."""

    interval: float = 0.025
    defer_while_busy: bool = True
    max_delay: float = 2.0
    max_backlog: int = 8192
    batch: int = 128


# Well above DrainPolicy.max_backlog, so an id still only in the journal (which the
# database cannot answer for yet) is here. Were it evicted, a redelivery would be
# answered 202 instead of 200 and then dropped by the drain's INSERT OR IGNORE.
RECENT_IDS = 65536


class JournalIntake:
    def __init__(self, store: JournaledStore, journal: IntakeJournal,
                 policy: DrainPolicy) -> None:
        self._store, self._journal, self._policy = store, journal, policy
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._capacity = max(RECENT_IDS, 4 * policy.max_backlog)
        self._timer: asyncio.TimerHandle | asyncio.Handle | None = None
        self._first_at = self._last_at = self._due = 0.0
        self._drained = self._drains = 0

    async def add(self, delivery: NewDelivery) -> bool:
        """Durable (against the process dying) once this returns True; False for a
        delivery id already accepted. OSError when the journal cannot be written."""
        delivery_id = delivery.delivery_id
        # A redelivery after a restart is no longer in memory: the database has it.
        if delivery_id in self._recent or self._store.known_delivery(delivery_id):
            return False
        self._journal.append(delivery)
        self._recent[delivery_id] = None
        if len(self._recent) > self._capacity:
            self._recent.popitem(last=False)
        self._schedule(asyncio.get_running_loop())
        return True

    def close(self) -> None:
        """Stop the timer and drain what is left (the journal itself stays open: the
        store owns it)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        try:
            self._count(self._store.drain_journal())
        except Exception:  # still durable in the journal; replayed at the next start
            log.exception("could not drain the intake journal at shutdown")

    def stats(self) -> dict[str, int]:
        return {"deliveries_journaled": self._journal.appended,
                "deliveries_drained": self._drained, "drains": self._drains}

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        now = self._last_at = loop.time()
        if self._journal.backlog == 1:  # a new backlog (a queue read may have drained)
            self._first_at = now
        if self._timer is None:
            self._arm(loop)

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        self._due = loop.time() + self._policy.interval
        self._timer = loop.call_at(self._due, self._tick, loop)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        if not self._journal.backlog:
            return
        if self._busy(loop, late=loop.time() - self._due > self._policy.interval / 2):
            self._arm(loop)
        else:
            self._step(loop)

    def _step(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        try:
            self._count(self._store.drain_journal(self._policy.batch))
        except Exception:
            log.exception("could not drain the intake journal; retrying in 1 s")
            self._timer = loop.call_later(1.0, self._step, loop)
            return
        if not self._journal.backlog:
            return
        if self._busy(loop, late=False):  # a burst resumed: let it through first
            self._arm(loop)
        else:
            self._timer = loop.call_soon(self._step, loop)

    def _busy(self, loop: asyncio.AbstractEventLoop, *, late: bool) -> bool:
        """Whether to keep deferring: intake looks busy and the backlog may still wait.
        A tick that fires late counts as busy: the loop was saturated or the process
        was not scheduled, so the silence since the last request proves nothing."""
        policy, now = self._policy, loop.time()
        if (not policy.defer_while_busy or now - self._first_at >= policy.max_delay
                or self._journal.backlog >= policy.max_backlog):
            return False
        return late or now - self._last_at < policy.interval

    def _count(self, report: DrainReport) -> None:
        if report.moved:
            self._drained += report.moved
            self._drains += 1
