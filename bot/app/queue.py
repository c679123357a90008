"""The worker pool: claims queued deliveries from the store and runs the handler.

Delivery semantics are at-least-once with a once-only outcome: a delivery is marked done only after
its handler returned, so a crash mid-delivery leaves it `running`, `start()` puts it back to
`pending`, and the handler runs again (handlers publish idempotently per head SHA). `attempts`
counts claims, so a delivery that crashes the process every time still reaches the dead-letter
state after `max_attempts`.

Failures: `RetryableError` → retry after its `retry_after` or the backoff; `PermanentError` →
dead-letter now; any other exception → retry with backoff. A payload that is not a JSON object
(intake only checks its first bytes) is dead-lettered before the handler sees it.

Debounce: a delivery with a `group_key` ("owner/repo#7"), or any pull_request one, is superseded,
not handled, when a later push of that PR is queued: the newest head wins.

Several replicas (a shared PostgreSQL store): claims are leased and renewed every third of the
lease while the handler runs; a replica that dies stops renewing and another takes the delivery
over when the lease runs out. One that was only stalled past its lease gives the delivery up,
cancels its handler and publishes nothing more for it (bot/app/claims.py). Only a store no one else
works (`store.shared` false: SQLite, one `serve` per file) takes back, at start, what was left
running. Deliveries about one pull request run one at a time across all replicas (a PR lease,
renewed with the delivery's): one that finds its PR busy is handed back, uncounted, until that
lease runs out; the one that frees the PR wakes the oldest waiter (a waiting push is then usually
superseded by the newer one, which it wakes).

Drain (SIGTERM): `stop()` stops claiming, lets running handlers finish for a while, then hands back
what is left (uncounted), so a rolling restart costs no attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bot.app.backoff import Backoff, exponential_backoff
from bot.app.claims import Claim, Leases
from bot.app.jsonlog import log_context
from bot.app.metrics import Metrics
from bot.app.payload_shape import parsed_payload
from bot.errors import LeaseLost, PermanentError, RetryableError
from bot.store import Delivery, Store
from bot.store.delivery_fields import DeliveryFields, delivery_fields
from bot.store.pr_tables import pr_waiting_note

log = logging.getLogger("bot.queue")

# The queue parses the payload once and hands it over with the delivery.
Handler = Callable[[Delivery, dict[str, Any]], Awaitable[None]]

RETENTION_SECONDS = 7 * 24 * 3600  # longer than GitHub's 3-day redelivery window
PRUNE_EVERY_SECONDS = 3600
# Events whose handlers review (or change what a review shows on) one pull request.
PER_PR_EVENTS = frozenset({"pull_request", "check_run", "check_suite", "issue_comment"})
PR_BUSY_RETRY_SECONDS = 1.0  # the least a delivery whose PR is busy waits


class Worker:
    def __init__(
        self,
        store: Store,
        handler: Handler,
        concurrency: int = 2,
        max_attempts: int = 5,
        backoff: Backoff | None = None,
        *,
        metrics: Metrics | None = None,
        poll_interval: float = 1.0,
        handler_timeout: float = 900.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.handler = handler
        self.concurrency = concurrency
        self.max_attempts = max_attempts
        self.backoff = backoff or exponential_backoff()
        self.metrics = metrics
        if metrics is not None:
            metrics.watch_store(store)  # queue depth and dead letters at each scrape
        self.poll_interval = poll_interval
        self.handler_timeout = handler_timeout
        self.clock = clock
        self._wake = asyncio.Event()
        self._stopping = False
        self._tasks: list[asyncio.Task[None]] = []
        self._heartbeat: asyncio.Task[None] | None = None
        self._last_prune = 0.0
        self.leases = Leases(store, clock)  # deliveries this process is running
        self.last_beat = time.monotonic()  # liveness: the loop keeps renewing

    @property
    def draining(self) -> bool:
        return self._stopping

    async def start(self) -> None:
        if not self.store.shared:
            recovered = self.store.requeue_running()
            if recovered:
                log.warning("requeued deliveries left running by a previous process",
                            extra={"count": recovered})
        self._stopping = False
        loop = asyncio.get_running_loop()

        def wake() -> None:  # called on the store's listener thread
            loop.call_soon_threadsafe(self.notify)

        self.store.listen(wake)
        self._tasks = [
            asyncio.create_task(self._run(), name=f"worker-{i}") for i in range(self.concurrency)
        ]
        self._heartbeat = asyncio.create_task(self._renew_leases(), name="lease-renewal")

    def notify(self) -> None:  # a delivery was queued: wake idle workers before the next poll
        self._wake.set()

    async def stop(self, timeout: float = 30.0) -> None:
        """Let running handlers finish (up to `timeout`), then cancel what is left."""
        self._stopping = True
        self._wake.set()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=timeout)
            for task in pending:
                task.cancel()
            for task in pending:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self._tasks = []
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None

    async def _renew_leases(self) -> None:
        interval = max(0.05, self.store.lease_seconds / 3)
        while True:
            await asyncio.sleep(interval)
            self.last_beat = time.monotonic()
            if not self.leases:
                continue
            try:
                self.leases.renew()  # gives up (and cancels) what it could not keep
            except Exception:
                log.exception("could not renew leases")  # retried at the next beat

    async def run_once(self) -> bool:
        """Claim and process one runnable delivery; False when none is due."""
        now = self.clock()
        delivery = self.store.claim(now)
        if delivery is None:
            return False
        await self._process(delivery, now)
        return True

    async def _run(self) -> None:
        while not self._stopping:
            try:
                if await self.run_once():
                    continue
                self._maybe_prune()
            except Exception:
                # The store itself failed (disk full, locked too long): keep the worker alive.
                log.exception("worker loop error")
            await self._idle()

    async def _idle(self) -> None:
        timeout = self.poll_interval
        due = self.store.next_due()
        if due is not None:
            timeout = max(0.0, min(timeout, due - self.clock()))
        if timeout > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()

    async def _process(self, d: Delivery, claimed_at: float) -> None:
        payload, problem = parsed_payload(d)
        fields = delivery_fields(payload)
        with log_context(delivery_id=d.id, event=d.event, action=d.action,
                         attempt=d.attempts, **fields.log_fields()):
            if problem is not None:
                # Intake checks only the first bytes (bot/store/delivery_fields.py); no retry
                # can make a payload parse, and the handler must never see one that does not.
                self._dead(d, problem)
                return
            if d.attempts > self.max_attempts:
                self._dead(d, f"gave up: claimed {d.attempts} times without finishing "
                              "(the process died or was stopped during the delivery)")
                return
            # A later push (its debounce key, bot/app/web.py) overtakes any pull_request
            # delivery of the PR, as it re-reads it; commands are never skipped.
            group = d.group_key or (f"{fields.repo}#{fields.number}" if d.event ==
                                    "pull_request" and fields.repo and fields.number else None)
            pr = _pull_request(d, fields)
            if group and self.store.has_newer_pending(group, d.received_at):
                self.store.supersede(d.id)
                self._count(d, "superseded")
                log.info("superseded by a newer delivery for the same pull request")
                if pr is not None:  # it may have been the waiter woken: pass the turn on
                    self.store.wake_pr_waiter(*pr, self.clock())
                return
            assert isinstance(payload, dict)  # `problem` is None only for an object
            if pr is not None and not self.store.lease_pr(*pr, d.id, self.clock()):
                self._wait_for(d, pr)
                return
            claim = self.leases.hold(d.id, claimed_at, pr is not None)
            try:
                await self._handle(d, payload, claim)
            finally:
                self.leases.drop(claim)
                if pr is not None:  # the next in line (oldest first) need not wait out the lease
                    self.store.release_pr(*pr, d.id)
                    self.store.wake_pr_waiter(*pr, self.clock())

    def _wait_for(self, d: Delivery, pr: tuple[str, int]) -> None:
        """Hand back until the busy PR's lease runs out (a dead holder frees it then; a live
        one wakes the oldest waiter as it ends): a waiter is claimed about once a lease, not
        once a second, and none is lost or starved (pending, due within one lease)."""
        now, until = self.clock(), self.store.pr_lease_until(*pr)
        self.store.release(d.id, max(now + PR_BUSY_RETRY_SECONDS, until or now),
                           pr_waiting_note(*pr))
        if self.store.pr_lease_until(*pr) is None:  # freed meanwhile: its wake may have missed us
            self.store.wake_pr_waiter(*pr, now)
        self._count(d, "deferred")
        log.info("pull request busy; handed back until it is free")

    async def _handle(self, d: Delivery, payload: dict[str, Any], claim: Claim) -> None:
        started = time.monotonic()
        try:
            await asyncio.wait_for(self.leases.start(claim, self.handler(d, payload)),
                                   self.handler_timeout)
        except LeaseLost as exc:
            self._lost(d, str(exc))
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not claim.lost or (current is not None and current.cancelling()):
                # Drain: hand the delivery back, uncounted, for this or another replica.
                self.store.release(d.id, self.clock(), "interrupted by shutdown")
                raise
            self._lost(d, "its lease ran out while the handler ran")
        except PermanentError as exc:
            self._dead(d, f"permanent error: {exc}")
        except RetryableError as exc:
            self._retry(d, f"retryable error: {exc}", exc.retry_after)
        except TimeoutError:
            self._retry(d, f"handler timed out after {self.handler_timeout:g}s", None)
        except Exception as exc:
            log.exception("handler failed")
            self._retry(d, f"{type(exc).__name__}: {exc}", None)
        else:
            self.store.complete(d.id)
            self._count(d, "done")
            log.info("delivery handled",
                     extra={"duration_ms": round((time.monotonic() - started) * 1000, 1)})

    def _retry(self, d: Delivery, error: str, retry_after: float | None) -> None:
        if d.attempts >= self.max_attempts:
            self._dead(d, f"{error} (attempt {d.attempts} of {self.max_attempts})")
            return
        delay = self.backoff(d.attempts) if retry_after is None else max(0.0, retry_after)
        self.store.fail(d.id, error, self.clock() + delay)
        self._count(d, "retry")
        log.warning("delivery failed; will retry", extra={"error": error,
                                                          "retry_in_s": round(delay, 3)})

    def _lost(self, d: Delivery, why: str) -> None:
        # Counted, as a crash is; fenced: if another replica holds it now, left to it.
        log.warning("delivery given up: lease lost", extra={"error": why})
        self._retry(d, f"lease lost: {why}", 0.0)

    def _dead(self, d: Delivery, error: str) -> None:
        self.store.fail(d.id, error, None)
        self._count(d, "dead")
        log.error("delivery moved to the dead-letter state", extra={"error": error})

    def _count(self, d: Delivery, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.delivery_processed(d.event, outcome)

    def _maybe_prune(self) -> None:
        now = self.clock()
        if now - self._last_prune < PRUNE_EVERY_SECONDS:
            return
        self._last_prune = now
        removed = self.store.prune(now - RETENTION_SECONDS)
        if removed:
            log.info("pruned finished deliveries", extra={"count": removed})


def _pull_request(d: Delivery, fields: DeliveryFields) -> tuple[str, int] | None:
    if d.event in PER_PR_EVENTS and fields.repo and fields.number:
        return fields.repo, fields.number
    return None

