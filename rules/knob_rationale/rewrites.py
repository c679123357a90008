"""A knob renamed with its value kept, and a script rewritten whole.

- `RETRY_DELAY_SECONDS="${RETRY_DELAY_SECONDS:-30}"` removed and
  `RETRY_INTERVAL_SECONDS="${RETRY_INTERVAL_SECONDS:-30}"` added in its place: the same
  30 s under another name (the old name is gone from the file, the new one was not in
  it, the names share a word). No value changed.
- A script whose base code the PR replaces nearly all of (three quarters of its code
  lines or more, in a script of some size) is a new implementation: its retry budget or
  wait is the new mechanism's (a run-status poll instead of an artifact download), and
  pairing it with the old mechanism's value would be a wrong old → new. Nothing is said,
  as when cases are restructured. Only scripts: a config's values keep their meaning
  whatever else of the file changes.
"""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import Change, KnobFilter, Setting, extract, holds_yaml_keys
from rules.analysis.lines import sides
from rules.analysis.memo import memoized

_FALLBACK_RE = re.compile(r"\$\{[A-Za-z_]\w{0,80}:?[-=]([^}\s$]{0,80})\}")
# Words that say how a knob is counted, not what it bounds.
_GENERIC = frozenset({"max", "min", "num", "n", "s", "sec", "secs", "seconds", "ms", "m",
                      "minutes", "mins", "h", "hours", "count", "default", "total", "size"})
_SCRIPTS = (".sh", ".bash", ".py")
_REWRITTEN = 0.75  # share of the base's code lines the PR removes
_MIN_CODE = 20  # code lines a base script needs for the share to mean a rewrite
_MAX_TEXT = 400_000


def _plain(value: str) -> str:
    """A value as a default run sees it: `"${X:-30}"` → `30`."""
    text = value.strip().strip("\"'").strip()
    fallback = _FALLBACK_RE.fullmatch(text)
    return fallback.group(1).strip("\"'") if fallback is not None else text


def _words(name: str) -> set[str]:
    return {w for w in name.split("-") if w and w not in _GENERIC}


def _present(text: str | None, raw: str) -> bool:
    if text is None:
        return False
    return re.search(rf"(?<![\w-]){re.escape(raw)}(?![\w-])", text[:_MAX_TEXT]) is not None


def renamed_knob(changed: ChangedFile, hunk: Hunk, change: Change, wanted: KnobFilter) -> bool:
    """Whether a knob the hunk adds replaces a removed knob of another name holding the
    same value."""
    new = change.new
    if change.old is not None or new is None:
        return False
    head = changed.head_text
    base = changed.base_text
    if _present(base, new.raw):
        return False  # the name was in the file already: not a rename into it
    value = _plain(new.value)
    words = _words(new.name)
    for old in _removed(hunk, changed.path, wanted):
        if (old.name != new.name and _plain(old.value) == value
                and words & _words(old.name) and not _present(head, old.raw)
                and (head is not None or old.raw not in _added_text(changed))):
            return True
    return False


@memoized
def _removed(hunk: Hunk, path: str, wanted: KnobFilter) -> list[Setting]:
    """The knob settings a hunk removes (its base side's changed lines)."""
    old_side, _ = sides(hunk)
    return [s for s in extract(old_side, wanted, yaml_keys=holds_yaml_keys(path),
                               python=path.endswith((".py", ".pyi"))) if s.changed]


@memoized
def _added_text(changed: ChangedFile) -> str:
    return "\n".join(line.text for line in changed.added_lines)


@memoized
def rewritten(changed: ChangedFile) -> bool:
    """Whether the PR replaces nearly all of a script's base code."""
    if not changed.path.endswith(_SCRIPTS):
        return False
    base = changed.base_lines
    if base is None:
        return False  # the patch alone does not show how much of the script is left
    code = sum(1 for text in base if _code(text))
    removed = sum(1 for line in changed.removed_lines if _code(line.text))
    return code >= _MIN_CODE and removed >= _REWRITTEN * code


def _code(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("#")

