"""The store's narrow interface and the rows it hands out.

Everything the App keeps between deliveries goes through `Store`, so a PostgreSQL
backend serving several replicas (`PostgresStore`) replaces `SqliteStore` without
touching the web layer, the worker or the handlers. Methods are synchronous and short (one
small transaction each); see `bot/store/__init__.py` for how they meet asyncio.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

import orjson

from bot.github.journal import Entry
from bot.github.reactions import ThumbsDown

DeliveryStatus = Literal["pending", "running", "done", "dead", "superseded"]
STATUSES: Final[tuple[DeliveryStatus, ...]] = ("pending", "running", "done", "dead", "superseded")
MAX_ERROR_CHARS = 2000


class StoreError(Exception):
    """The database cannot be opened or migrated (a message fit for an operator)."""


@dataclass(frozen=True)
class NewDelivery:
    """A verified webhook delivery about to be queued."""

    delivery_id: str
    event: str
    action: str | None
    payload: bytes
    received_at: float
    not_before: float
    group_key: str | None = None


@dataclass(frozen=True)
class Delivery:
    """A queued delivery as the worker sees it (`attempts` counts this claim)."""

    id: str
    event: str
    action: str | None
    payload: bytes
    received_at: float
    not_before: float
    group_key: str | None
    status: DeliveryStatus
    attempts: int
    last_error: str | None

    def json(self) -> Any:
        """The payload, parsed (HMAC-verified at intake, where only its first bytes and,
        for pull_request, a few fields were read). ValueError if it is not JSON."""
        try:
            return orjson.loads(self.payload)  # ~3x faster than json on 28 kB
        except orjson.JSONDecodeError:
            # orjson refuses a few things json accepts (integers over 64 bits, say).
            return json.loads(self.payload)


@dataclass(frozen=True)
class WaiverRow:
    id: int
    repo: str
    number: int
    rule: str
    path: str | None
    reason: str
    by: str
    at: float


class Store(Protocol):
    # Whether other processes (replicas) work the same queue: then a start-up must not
    # take back `running` deliveries, which may be alive elsewhere (leases expire instead).
    shared: bool
    # How long a claim (and a PR lease) holds without renewal.
    lease_seconds: float

    # --- the delivery queue -------------------------------------------------
    def add_delivery(
        self, delivery_id: str, event: str, action: str | None, payload: bytes,
        received_at: float, not_before: float, group_key: str | None,
    ) -> bool:
        """Queue a delivery; False when this X-GitHub-Delivery id is already known."""

    def add_deliveries(self, batch: Sequence[NewDelivery]) -> list[bool]:
        """`add_delivery` for many in one transaction (group commit); one bool each."""

    def add_to_inbox(self, batch: Sequence[NewDelivery]) -> list[bool]:
        """Intake's durable write (bot/store/inbox.py): one transaction, one bool each
        (False: the id is already in the inbox or the queue)."""

    def promote_inbox(self, limit: int = 512) -> int:
        """Move up to `limit` inbox rows into the queue; how many were taken."""

    def claim(self, now: float) -> Delivery | None:
        """Atomically mark one runnable delivery running, leased to this process until
        `now` + the lease: pending with not_before <= now, or running with an expired
        lease (its replica died)."""

    def renew(self, delivery_ids: Sequence[str], now: float,
              with_pr: Collection[str] = ()) -> set[str]:
        """Extend from `now` this process's leases that have not run out by `now`
        (deliveries and, for the ids in `with_pr`, the PRs they hold); returns the ids
        still held (a delivery in `with_pr` whose PR lease ran out is not)."""

    def release(self, delivery_id: str, retry_at: float, note: str | None = None) -> None:
        """Back to pending at `retry_at` without counting the claim as an attempt."""

    def offload_checkpoints(self) -> None:
        """Keep log maintenance (SQLite's WAL checkpoints) out of the commits: intake
        commits on the event loop (bot/app/web.py)."""

    def listen(self, wake: Callable[[], None]) -> None:
        """Call `wake` (from any thread) when another process queues a delivery."""

    def complete(self, delivery_id: str) -> None: ...

    def fail(self, delivery_id: str, error: str, retry_at: float | None) -> None:
        """Back to pending at `retry_at`, or dead-letter it when `retry_at` is None."""

    def supersede(self, delivery_id: str) -> None: ...

    def requeue_running(self) -> int:
        """Crash recovery at start-up: running → pending; returns how many."""

    def has_newer_pending(self, group_key: str, received_at: float) -> bool:
        """Whether a later delivery of the group is pending, running or done."""

    def next_due(self) -> float | None:
        """The earliest `not_before` of a pending delivery, for the worker's sleep."""

    def get_delivery(self, delivery_id: str) -> Delivery | None: ...

    def counts(self) -> dict[DeliveryStatus, int]:
        """Deliveries by status (every status present, zero included)."""

    def prune(self, before: float) -> int:
        """Drop finished deliveries last updated before `before`; returns how many."""

    # --- one review of a PR at a time ------------------------------------------
    def lease_pr(self, repo: str, number: int, delivery_id: str, now: float) -> bool:
        """Take the PR for this claimed delivery; False while another one holds it."""

    def release_pr(self, repo: str, number: int, delivery_id: str) -> None: ...

    def pr_lease_until(self, repo: str, number: int) -> float | None:
        """When the PR's lease runs out unless renewed; None when no one holds it."""

    def wake_pr_waiter(self, repo: str, number: int, now: float) -> bool:
        """Make the oldest delivery waiting for this PR due now; False when none waits."""

    # --- per-PR published state ----------------------------------------------
    def get_pr_state(self, repo: str, number: int) -> dict[str, Any] | None: ...

    def put_pr_state(self, repo: str, number: int, state: dict[str, Any]) -> None: ...

    # --- the publication journal (bot/store/journal.py) -------------------------
    def journal_entries(self, repo: str, number: int) -> dict[str, Entry]: ...

    def journal_intend(self, repo: str, number: int, step: str, intent: dict[str, Any],
                       held_by: str | None = None) -> None:
        """Record the intent; with `held_by`, only while this process's lease on that
        delivery is valid (else `LeaseLost`, nothing recorded, nothing to send)."""

    def journal_record(self, repo: str, number: int, step: str,
                       result: dict[str, Any]) -> None: ...

    def journal_clear(self, repo: str, number: int) -> None: ...

    # --- waivers --------------------------------------------------------------
    def add_waiver(
        self, repo: str, number: int, rule: str, path: str | None, reason: str,
        by: str, at: float,
    ) -> int:
        """Record a waiver; returns its id."""

    def remove_waivers(self, repo: str, number: int, rule: str) -> int: ...

    def list_waivers(self, repo: str, number: int) -> list[WaiverRow]: ...

    def current_waivers(self, limit: int = 200) -> list[WaiverRow]:
        """Every repository's waivers, newest first (the dashboard lists them)."""

    # --- slash commands ---------------------------------------------------------
    def mark_comment_handled(self, comment_id: int) -> bool:
        """False when the comment was handled before (idempotent on comment id)."""

    def allow_command(self, user: str, now: float, limit: int, window_s: float) -> bool:
        """Record a command by `user` unless they already ran `limit` in the window."""

    # --- durable slash commands (bot/store/command_tables.py) ---------------------
    def comment_handled(self, comment_id: int) -> bool: ...

    def command_progress(self, comment_id: int) -> dict[str, Any]:
        """What earlier attempts at this comment recorded ({} for none)."""

    def save_command_progress(self, comment_id: int, progress: dict[str, Any]) -> None: ...

    def waive_once(
        self, comment_id: int, step: int, progress: dict[str, Any], repo: str, number: int,
        rule: str, path: str | None, reason: str, by: str, at: float,
    ) -> None:
        """Add the waiver of the comment's command `step` (once) and save `progress`."""

    def unwaive_once(self, comment_id: int, step: int, progress: dict[str, Any], repo: str,
                     number: int, rule: str) -> int:
        """Remove the rule's waivers for command `step` (once); how many were removed."""

    def misfire_once(
        self, comment_id: int, step: int, progress: dict[str, Any], repo: str, number: int,
        rule: str, reason: str | None, by: str, at: float,
    ) -> None:
        """Record a false-positive verdict for command `step` (once) and save `progress`."""

    def verdict_counts(self) -> dict[tuple[str, str], dict[str, int]]:
        """(repo, rule) → {"misfires", "misfires_prs", "waivers", "waivers_prs"} counts."""

    def finish_command(self, comment_id: int) -> None:
        """Mark the comment handled and drop its progress."""

    # --- 👎 reactions as misfires (bot/store/reaction_tables.py) -------------------
    def reactions_read(self, repo: str, number: int) -> tuple[dict[int, int], set[tuple[int, str]]]:
        """The 👎 count read last per bot comment of the PR; (comment, user) recorded."""

    def record_reactions(self, repo: str, number: int, counts: dict[int, int],
                         verdicts: Sequence[ThumbsDown], at: float) -> int:
        """Save the counts read and each new verdict as a misfire, once; how many added."""

    def take_rate(self, comment_id: int, buckets: Sequence[tuple[str, int, float]],
                  now: float) -> str | None:
        """Count the comment in each (bucket, limit, window) unless one is full: then
        that bucket's name. Idempotent per comment."""

    # --- operations ---------------------------------------------------------------
    def ping(self) -> bool: ...

    def close(self) -> None: ...
