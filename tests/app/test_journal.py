"""The publication journal in the store (SQLite and PostgreSQL), and a recovering
publish that finds a write of a dead worker in doubt: it reads GitHub back for that
write instead of sending it again."""

from __future__ import annotations

import asyncio

from bot.github.check_run import external_id
from bot.github.journal import Entry, MemoryJournal, check_step, review_step
from bot.github.publish import start_check
from bot.store import SqlStore, StoreJournal
from tests.github.kit import REPO, app_side, new_fake, push, workflow

OWNER, NAME = REPO.split("/")


def test_an_intent_is_kept_until_its_result_and_a_new_intent_forgets_the_result(
    store: SqlStore,
) -> None:
    journal = StoreJournal(store, REPO, 7)
    journal.intend("check:abc", {"replaces": 0})
    assert journal.entries() == {"check:abc": Entry({"replaces": 0}, None)}
    journal.record("check:abc", {"id": 5})
    journal.intend("summary", {})
    assert journal.entries() == {"check:abc": Entry({"replaces": 0}, {"id": 5}),
                                 "summary": Entry({}, None)}
    journal.intend("check:abc", {"replaces": 5})  # a second run on the head
    assert journal.entries()["check:abc"] == Entry({"replaces": 5}, None)
    assert StoreJournal(store, REPO, 8).entries() == {}  # per pull request
    store.journal_clear(REPO, 7)
    assert journal.entries() == {}


def test_a_create_in_flight_at_a_crash_is_adopted_by_its_external_id() -> None:
    fake = new_fake()
    head = push(fake, 7, {".github/workflows/ci.yml": (workflow(), workflow(silenced=True))},
                tag="h1")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            # The dead worker's create landed, its answer never arrived.
            first = await app.run(start_check(OWNER, NAME, head, None))
            (run,) = fake.check_runs(REPO, head)
            assert run.external_id == external_id(OWNER, NAME, head)
            journal = MemoryJournal()
            journal.intend(check_step(head), {"replaces": 0})
            writes = len(fake.writes())
            state = await app.run(start_check(OWNER, NAME, head, None, journal))
            assert state["check"]["id"] == first["check"]["id"] == run.id
            assert len(fake.writes()) == writes  # adopted, already in_progress
            assert fake.count("checks/list-for-ref") == 1
            assert journal.entries()[check_step(head)].result == {"id": run.id,
                                                                 "status": "in_progress"}
            # Without a doubt in the journal, no listing at all.
            await app.run(start_check(OWNER, NAME, head, state, MemoryJournal()))
            assert fake.count("checks/list-for-ref") == 1

    asyncio.run(scenario())
    assert len(fake.check_runs(REPO, head)) == 1 and fake.violations == []


def test_step_names_are_per_head() -> None:
    assert check_step("a") != check_step("b") and review_step("a") != check_step("a")
