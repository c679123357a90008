"""One change repeated across files: a knob swept across sibling configs, and test fixtures
mirroring a default the PR retunes elsewhere (asked about once, where it is decided)."""

from __future__ import annotations

import re
from collections import Counter

from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.knobs import Change, KnobFilter, Setting, hunk_changes


def signature(setting: Setting, change: Change) -> tuple[str, str, str]:
    old = change.old.value if change.old is not None else ""
    return setting.name, old, setting.value


def sweep_key(changed: ChangedFile, change: Change) -> tuple[str, ...]:
    """One change swept across sibling configs: the same knob added to each file of a
    directory (with each config's own value), or the same old → new retune."""
    folder = changed.path.rpartition("/")[0]
    if change.old is None:
        return folder, change.setting.name, "added"
    return folder, *signature(change.setting, change)


def swept(asks: list[tuple[ChangedFile, list[Change]]]) -> set[tuple[str, ...]]:
    """Knobs added to three or more files of a directory: one change swept across its
    configs (a setting a new backend needs), asked about once."""
    counts: Counter[tuple[str, ...]] = Counter()
    for changed, changes in asks:
        counts.update({sweep_key(changed, c) for c in changes if c.old is None})
    return {key for key, n in counts.items() if n >= 3}


MAX_MIRROR_FILES = 300  # a huge PR's defaults are not all read for one courtesy
TEST_PATH_RE = re.compile(r"(?:^|/)tests?/|(?:^|/)test_[^/]*$|_test\.[^/]*$")


def mirrors(snapshot: PullRequestSnapshot, union: KnobFilter) -> set[tuple[str, str, str]]:
    """Retunes the PR makes in its non-test files (a library default, CI surface or not):
    a test fixture repeating the same old → new follows that default."""
    found: set[tuple[str, str, str]] = set()
    for changed in snapshot.files[:MAX_MIRROR_FILES]:
        if TEST_PATH_RE.search(changed.path) or changed.status != "modified":
            continue
        for hunk in changed.hunks:
            found.update(signature(c.setting, c) for c in hunk_changes(changed, hunk, union)
                         if c.old is not None and c.new is not None and c.is_change)
    return found
