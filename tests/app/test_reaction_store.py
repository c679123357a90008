"""👎 verdicts in the store on both backends (SQLite on a real file, the machine's real
PostgreSQL): each (comment, user) one misfire, counts read kept per comment."""

from __future__ import annotations

from bot.github.reactions import ThumbsDown
from bot.store import SqlStore


def test_each_comment_and_user_is_one_misfire_however_often_read(store: SqlStore) -> None:
    big = 2_000_000_001  # GitHub's comment ids pass 2**31
    assert store.reactions_read("o/r", 1) == ({}, set())
    first = [ThumbsDown(big, "maint", "silenced-test"), ThumbsDown(5, "maint", "dedup-note")]
    assert store.record_reactions("o/r", 1, {big: 1, 5: 1}, first, 10.0) == 2
    again = [ThumbsDown(big, "maint", "silenced-test"), ThumbsDown(big, "admin", "silenced-test")]
    assert store.record_reactions("o/r", 1, {big: 2}, again, 11.0) == 1
    assert store.reactions_read("o/r", 1) == (
        {big: 2, 5: 1}, {(big, "maint"), (big, "admin"), (5, "maint")})
    assert store.reactions_read("o/r", 2) == ({}, set())
    counts = store.verdict_counts()
    assert counts[("o/r", "silenced-test")]["misfires"] == 2
    assert counts[("o/r", "dedup-note")]["misfires"] == 1
