"""A test file renamed into another test is a new test, not the old one retuned.

A PR renames `test_qwen_models.py` to `test_cache_miss.py`, `TestQwenModel` to
`TestCacheMiss` and `test_mmlu` to `test_cache_miss`, and rewrites the body: git pairs
the two files by their shared boilerplate, and the server arguments of the new test
line up with the old one's (`--mem-fraction-static 0.1 → 0.2`). When the file's name
changes and no test class or function of the base survives in the head, the head is a
new test whose values are its configuration, as for an added file. A file only moved
(same name), or keeping any of its tests, is compared as usual.
"""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile

_TEST_DEF_RE = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+((?:test|Test)\w*)", re.M)
_MAX_TEXT = 400_000


def _names(text: str) -> frozenset[str]:
    return frozenset(_TEST_DEF_RE.findall(text[:_MAX_TEXT]))


def _side_text(changed: ChangedFile, head: bool) -> str:
    full = changed.head_text if head else changed.base_text
    if full is not None:
        return full
    return "\n".join(line.text for hunk in changed.hunks for line in hunk.lines
                     if (line.new_no if head else line.old_no) is not None)


def renamed_into_another_test(changed: ChangedFile) -> bool:
    """Whether a renamed test file keeps none of its base tests (a new test)."""
    previous = changed.previous_path
    if changed.status != "renamed" or not previous or not changed.path.endswith(".py"):
        return False
    if previous.rsplit("/", 1)[-1] == changed.path.rsplit("/", 1)[-1]:
        return False  # moved, not renamed
    before, after = _names(_side_text(changed, False)), _names(_side_text(changed, True))
    return bool(before) and bool(after) and not before & after
