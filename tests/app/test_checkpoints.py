"""SQLite's WAL checkpoints taken off the committing thread (bot/store/sqlite.py): the
intake connection never checkpoints, a thread of the store's does, and stops with it."""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path

from bot.store import NewDelivery, connect
from tests.app.helpers import payload_bytes

BODY = payload_bytes("pull_request.synchronize")


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate()}


def test_offloaded_checkpoints_reach_the_database_file_and_stop_with_the_store(
    tmp_path: Path,
) -> None:
    db = tmp_path / "bot.db"
    store = connect(db)
    store.offload_checkpoints(interval=0.05)
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    assert "sqlite-checkpoints" in _threads()
    before = os.path.getsize(db)
    for _ in range(20):  # ~800 pages of WAL: past the 1,000-page default in all
        store.add_to_inbox([NewDelivery(uuid.uuid4().hex, "pull_request", "synchronize",
                                        BODY, 1.0, 1.0) for _ in range(20)])
    deadline = time.monotonic() + 30
    while os.path.getsize(db) < before + 400 * 4096:  # copied in by the thread
        assert time.monotonic() < deadline, "no checkpoint reached the database file"
        time.sleep(0.05)
    store.close()
    assert "sqlite-checkpoints" not in _threads()
    again = connect(db)
    assert again.inbox_count() == 400
    again.close()
