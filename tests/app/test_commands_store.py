"""The store's slash-command bookkeeping on both backends (SQLite on a real file, the
machine's real PostgreSQL): progress, effects once per step, rate buckets."""

from __future__ import annotations

from bot.store import SqlStore


def test_a_waiver_is_recorded_once_per_step_with_its_progress(store: SqlStore) -> None:
    for attempt in range(3):  # retries of the same comment
        store.waive_once(7, 0, {"attempt": attempt}, "o/r", 1, "silenced-test", None,
                         "why", "maint", 10.0)
    store.waive_once(7, 1, {"attempt": 3}, "o/r", 1, "dedup-note", "a.py", "why", "maint", 11.0)
    assert [w.rule for w in store.list_waivers("o/r", 1)] == ["silenced-test", "dedup-note"]
    assert store.command_progress(7) == {"attempt": 3}
    assert store.unwaive_once(8, 0, {}, "o/r", 1, "silenced-test") == 1
    assert store.unwaive_once(8, 0, {}, "o/r", 1, "silenced-test") == 1  # the same answer
    assert [w.rule for w in store.list_waivers("o/r", 1)] == ["dedup-note"]
    assert not store.comment_handled(7)
    store.finish_command(7)
    store.finish_command(7)
    assert store.comment_handled(7) and store.command_progress(7) == {}


def test_rate_buckets_count_each_comment_once(store: SqlStore) -> None:
    buckets = [("user:a", 2, 60.0), ("pr:o/r#1", 3, 60.0)]
    assert store.take_rate(1, buckets, 0.0) is None
    assert store.take_rate(1, buckets, 1.0) is None  # a retry: not counted again
    assert store.take_rate(2, buckets, 2.0) is None
    assert store.take_rate(3, buckets, 3.0) == "user:a"  # full; nothing counted
    assert store.take_rate(4, [("user:b", 2, 60.0), ("pr:o/r#1", 3, 60.0)], 4.0) is None
    assert store.take_rate(5, [("user:c", 2, 60.0), ("pr:o/r#1", 3, 60.0)], 5.0) == "pr:o/r#1"
    assert store.take_rate(6, buckets, 60.5) is None  # the window slid past comment 1


def test_misfires_and_waivers_are_counted_per_repo_and_rule(store: SqlStore) -> None:
    store.misfire_once(9, 0, {}, "o/r", 1, "silenced-test", "upload step", "maint", 1.0)
    store.misfire_once(9, 0, {}, "o/r", 1, "silenced-test", "upload step", "maint", 1.0)
    store.misfire_once(10, 0, {}, "o/r", 2, "silenced-test", None, "maint", 2.0)
    store.add_waiver("o/r", 2, "silenced-test", None, "why", "maint", 3.0)
    assert store.verdict_counts() == {("o/r", "silenced-test"): {
        "misfires": 2, "misfires_prs": 2, "waivers": 1, "waivers_prs": 1}}
