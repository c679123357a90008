"""The deliveries this replica holds, and the lease expiry it has secured for each.

A claim's lease is only as good as its last renewal: a replica whose event loop stalls
(a GC pause, a blocking call, a slow database) past that expiry may find its delivery
claimed by another replica, which then publishes the same review. So each claim keeps
the expiry the store granted it (claim or renewal time + the lease, taken before the
statement ran, so never later than the store's own), and:

- the renewer gives up every claim whose secured expiry has passed before renewing
  the rest, and any the store did not renew (`renew` extends only leases still valid),
  cancelling its handler;
- every GitHub write (`GuardedDriver`, the App's driver) and every save of the PR's
  state first checks that the claim has at least `margin` of its lease left, so a write
  is sent only while no other replica can have taken the delivery (the in-flight write
  gets that margin, a third of the lease, to land); the store's journal also refuses an
  intent once the lease ran out (bot/store/journal.py).

The check is per handler task: the worker runs each handler in a task whose context
holds its claim (`CURRENT`), and work outside a claim (the CLI, tests) is unguarded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass

from bot.errors import LeaseLost
from bot.github.calls import ApiCall, ApiResult
from bot.github.drive_async import AsyncDriver
from bot.store import Store

log = logging.getLogger("bot.queue")

# The share of a lease a write needs left before it is sent: the renewer runs every third.
WRITE_MARGIN = 1 / 3


@dataclass
class Claim:
    delivery_id: str
    secured_until: float  # the lease expiry the store granted this replica
    clock: Callable[[], float]
    margin: float
    with_pr: bool = False  # it holds its PR's lease too (renewed and checked with it)
    task: asyncio.Future[None] | None = None
    lost: bool = False

    def check(self) -> None:
        """Raise `LeaseLost` unless the claim is held with `margin` to spare."""
        if not self.lost and self.clock() < self.secured_until - self.margin:
            return
        self.lost = True
        raise LeaseLost(f"the lease of delivery {self.delivery_id} ran out (or is about "
                        "to) before it was renewed; nothing more is published for it")


CURRENT: ContextVar[Claim | None] = ContextVar("ci_stability_claim", default=None)


def held_delivery() -> str | None:
    """The delivery whose claim this handler runs under; None outside the worker."""
    claim = CURRENT.get()
    return None if claim is None else claim.delivery_id


def ensure_held() -> None:
    """In a handler: raise `LeaseLost` if its claim can no longer be trusted."""
    claim = CURRENT.get()
    if claim is not None:
        claim.check()


class Leases:
    """The claims this replica holds; `renew` is one beat of the renewer."""

    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        self.store = store
        self.clock = clock
        self.held: dict[str, Claim] = {}

    def __bool__(self) -> bool:
        return bool(self.held)

    def hold(self, delivery_id: str, claimed_at: float, with_pr: bool) -> Claim:
        lease = self.store.lease_seconds
        claim = Claim(delivery_id, claimed_at + lease, self.clock, lease * WRITE_MARGIN, with_pr)
        self.held[delivery_id] = claim
        return claim

    def drop(self, claim: Claim) -> None:
        self.held.pop(claim.delivery_id, None)

    def start(self, claim: Claim, handler: Awaitable[None]) -> asyncio.Future[None]:
        """Run the handler in a task of its own (the renewer can cancel it), with the
        claim in its context for `ensure_held`."""
        token = CURRENT.set(claim)
        try:
            claim.task = asyncio.ensure_future(handler)
        finally:
            CURRENT.reset(token)
        return claim.task

    def renew(self) -> None:
        now = self.clock()
        for claim in list(self.held.values()):
            if not claim.lost and claim.secured_until <= now:
                self.give_up(claim, "its lease ran out before it was renewed (this replica "
                                    "was stalled longer than the lease)")
        live = [c for c in self.held.values() if not c.lost]
        if not live:
            return
        kept = self.store.renew(sorted(c.delivery_id for c in live), now,
                                {c.delivery_id for c in live if c.with_pr})
        for claim in live:
            if claim.delivery_id in kept:
                claim.secured_until = now + self.store.lease_seconds
            else:
                self.give_up(claim, "the store did not renew its lease (it ran out first, "
                                    "or another replica took the delivery over)")

    def give_up(self, claim: Claim, why: str) -> None:
        claim.lost = True
        if claim.task is not None and not claim.task.done():
            claim.task.cancel()
        log.warning("gave up a running delivery: %s", why,
                    extra={"delivery_id": claim.delivery_id})


class GuardedDriver(AsyncDriver):
    """The App's driver: a write to GitHub leaves only while the handler's claim holds
    (checked right before each send, retries and redirects included)."""

    async def _once(self, call: ApiCall, hops: int = 0) -> ApiResult:
        if call.is_write:
            ensure_held()
        return await super()._once(call, hops)
