"""`EntryKeeper`: which listed files a review reads, in-scope first, within the caps."""

from __future__ import annotations

import copy
from typing import Any

from bot.core.limits import ReviewLimits
from bot.github.fetch_caps import EntryKeeper


def entry(path: str, patch: str = "@@ -1 +1 @@\n-a\n+b") -> dict[str, Any]:
    return {"filename": path, "status": "modified", "patch": patch}


def test_in_scope_files_push_out_earlier_ones_and_answers_are_never_changed() -> None:
    offered = [entry("a.py"), entry("b.py"), entry("ci/x.yml"), entry("c.py")]
    pristine = copy.deepcopy(offered)
    keeper = EntryKeeper(ReviewLimits(max_files=2), lambda path: path.startswith("ci/"))
    for item in offered:
        keeper.offer(item)
    assert offered == pristine  # the ETag cache may hand these objects out again
    capped = [e["filename"] for e in keeper.entries if keeper.is_capped(e)]
    assert capped == ["b.py", "c.py"]
    assert all("patch" not in e for e in keeper.entries if keeper.is_capped(e))
    assert [e["filename"] for e in keeper.entries] == ["a.py", "b.py", "ci/x.yml", "c.py"]


def test_the_byte_cap_counts_patches_then_texts() -> None:
    keeper = EntryKeeper(ReviewLimits(max_bytes=2048), lambda path: True)
    for item in (entry("a.py", "x" * 1500), entry("b.py", "y" * 1000), entry("c.py", "z")):
        keeper.offer(item)
    assert [e["filename"] for e in keeper.entries if keeper.is_capped(e)] == ["b.py"]
    assert not keeper.spent
    keeper.spend(600)
    assert keeper.spent
    kept = keeper.entries[2]
    keeper.drop(kept)
    assert keeper.is_capped(kept) and keeper.total == 1500 + 600
