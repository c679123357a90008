"""Which YAML list items a run of removed lines removes whole, and the list they sat in.

A removed entry is what stops running. Removing `- name: test_gsm8k_fp8` and its
`steps:` line merges that stage into the one above: every step under it still runs (its
lines stay, more indented than the removed item). Renaming a stage (`- name: a` → `- name:
b`) removes nothing either. An item is removed only with everything under it: the run's
lines up to the next line at or left of its dash, and the first line the base keeps after
the run is not one of its children. An item followed by an added item at its own
indentation was replaced in place (a change the knob analyses read), not removed.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.snapshot import ChangedFile, Hunk, LineKind
from rules.analysis.lines import indent_width

_MAX_WALK = 400  # base lines walked up to find an item's list


def _content(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("#")


def _item(text: str) -> bool:
    return text.lstrip().startswith("- ") or text.strip() == "-"


def _kept_after(changed: ChangedFile, hunk: Hunk, end: int) -> str | None:
    """The first base line after the run ending at hunk.lines[end] that is neither blank
    nor a comment (a comment is nobody's child)."""
    for line in hunk.lines[end:]:
        if line.kind is LineKind.CONTEXT and _content(line.text):
            return line.text
        if line.kind is LineKind.REMOVED:
            return None  # another run: read on its own
    base = changed.base_lines
    last = next((ln.old_no for ln in reversed(hunk.lines) if ln.old_no is not None), None)
    if base is None or last is None:
        return None
    return next((text for text in base[last:last + _MAX_WALK] if _content(text)), None)


def _replacing_indents(hunk: Hunk, end: int) -> set[int]:
    """Indentations of the items added right after the run."""
    indents: set[int] = set()
    for line in hunk.lines[end:]:
        if line.kind is not LineKind.ADDED:
            break
        if _item(line.text):
            indents.add(indent_width(line.text))
    return indents


def whole_items(changed: ChangedFile, hunk: Hunk, start: int,
                end: int) -> list[tuple[int, int]] | None:
    """Index ranges of hunk.lines[start:end] (a run of removed lines) that are list items
    removed whole; None when the run holds no YAML list item."""
    lines = hunk.lines
    heads = [j for j in range(start, end) if _item(lines[j].text)]
    if not heads:
        return None
    replaced = _replacing_indents(hunk, end)
    after = _kept_after(changed, hunk, end)
    spans: list[tuple[int, int]] = []
    for j in heads:
        own = indent_width(lines[j].text)
        if spans and spans[-1][1] > j:
            continue  # nested in an item already taken whole
        k = next((m for m in range(j + 1, end) if lines[m].text.strip()
                  and indent_width(lines[m].text) <= own), end)
        if k == end and after is not None and indent_width(after) > own:
            continue  # a header: what was under it is kept (merged into another item)
        if own in replaced:
            continue  # replaced in place by the added item
        spans.append((j, k))
    return spans


def enclosing(changed: ChangedFile, hunk: Hunk, index: int) -> str | None:
    """The key of the list holding the item at hunk.lines[index] (`steps`), from the
    base side of the hunk or, above it, the base text."""
    own = indent_width(hunk.lines[index].text)
    above: Sequence[str] = [ln.text for ln in hunk.lines[:index]
                            if ln.kind is not LineKind.ADDED]
    first = hunk.lines[0].old_no
    base = changed.base_lines
    if base is not None and first is not None:
        above = [*base[max(0, first - 1 - _MAX_WALK):first - 1], *above]
    for text in reversed(above):
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = indent_width(text)
        if indent < own or (indent == own and not _item(text)):
            key = stripped.removeprefix("- ").split(":", 1)[0].strip("\"' ")
            return key if stripped.endswith(":") and key else None
    return None
