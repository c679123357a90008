"""Where a knob sits: the entry it belongs to (a list item, an object of an array, a test
function, a top-level statement), whether that entry is new in this PR, and which test
function owns a value, so values are only paired within one entry.

Read from the file's full text when the snapshot has it, else from the patch's lines
(the entries of lines the patch does not show are unchanged, so answers stay right).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from operator import attrgetter

from bot.core.snapshot import ChangedFile, LineKind
from rules.analysis.knobs.churn import readded
from rules.analysis.lines import indent_width
from rules.analysis.memo import memoized

_DEF_RE = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)")
# A YAML list item that is a mapping, or a flow mapping item.
_ITEM_RE = re.compile(r"^\s*-\s+(?:[\"']?[\w.$/<-]+[\"']?\s*:(?:\s|$)|\{|&\S+\s*$)")
# A key whose value is a mapping on the following lines (`gpt: {`, `env_vars:`); a
# quoted key may hold spaces (`"DeepSeek-V3 FP8 TP4": {`, a case table keyed by name).
_KEYED_OPENER_RE = re.compile(
    r"^\s*(?:\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[\w.$/-]+)\s*[:=]\s*(?:\{|dict\(|&\S+)?\s*$")
# An element of a JSON/Python list: an object, a tuple, a call building one.
_ELEMENT_RE = re.compile(r"^\s*(?:[{(]|dict\(|(?:pytest\.)?param\()")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
_BARE = frozenset({"{", "(", "[", "- {", "dict("})
_OLD_NO = attrgetter("old_no")
_MAX_WALK = 4000  # lines walked up from a setting to find its entry


@dataclass(frozen=True)
class _Side:
    numbers: tuple[int, ...]
    texts: dict[int, str]
    changed: frozenset[int]


def _skip(text: str) -> bool:
    stripped = text.strip()
    return not stripped or stripped.startswith(("#", "//"))


@memoized
def _side(changed: ChangedFile, head: bool) -> _Side:
    full = changed.head_lines if head else changed.base_lines
    # The changed lines' numbers: the file's own (cached) set for the head side, read at
    # C speed from its (cached) removed lines for the base.
    marked = changed.added_line_numbers if head else (
        frozenset(map(_OLD_NO, changed.removed_lines)) - {None})
    if full is not None:
        return _Side(tuple(range(1, len(full) + 1)), dict(enumerate(full, 1)), marked)
    # The file's own mappings, shared with other analyses: read-only here.
    texts = changed.patch_head_lines if head else changed.patch_base_lines
    return _Side(tuple(sorted(texts)), texts, marked)


def _ancestors(side: _Side, number: int) -> list[int]:
    """Lines enclosing `number` by indentation, innermost first."""
    start = side.texts.get(number)
    if start is None:
        return []
    threshold = indent_width(start)
    out: list[int] = []
    k = bisect_left(side.numbers, number) - 1
    stop = max(-1, k - _MAX_WALK)
    while k > stop and threshold > 0:
        n = side.numbers[k]
        text = side.texts[n]
        k -= 1
        if _skip(text):
            continue
        indent = indent_width(text)
        if indent < threshold:
            out.append(n)
            threshold = indent
    return out


def owner(changed: ChangedFile, head: bool, number: int) -> str:
    """The function or class a Python line belongs to ("" when unknown or none)."""
    if not changed.path.endswith((".py", ".pyi")):
        return ""
    if not _edits_definitions(changed):
        return ""  # the same functions on both sides: a hunk's pairs stay within one
    side = _side(changed, head)
    for n in _ancestors(side, number):
        match = _DEF_RE.match(side.texts[n])
        if match:
            return match.group(1)
    return ""


@memoized
def _edits_definitions(changed: ChangedFile) -> bool:
    return any(_DEF_RE.match(line.text) for hunk in changed.hunks for line in hunk.lines
               if line.kind is not LineKind.CONTEXT)


def _opens_entry(text: str, python: bool, top: bool) -> bool:
    if _DEF_RE.match(text) or _ITEM_RE.match(text) or _ELEMENT_RE.match(text):
        return True
    return python and top  # a module-level statement (`base = dict(`, `for m in [...]:`)


def _identity(text: str) -> str:
    """What an entry's opening line is, whatever its values: a function by its name,
    anything else by its text without numbers ("" for a bare bracket, which is none)."""
    match = _DEF_RE.match(text)
    if match:
        return "def " + match.group(1)
    stripped = _NUMBER_RE.sub("", text).strip()
    return "" if stripped.rstrip(",") in _BARE else stripped


@memoized
def _removed_identities(changed: ChangedFile) -> frozenset[str]:
    return frozenset(_identity(line.text) for line in changed.removed_lines)


def in_new_entry(changed: ChangedFile, number: int) -> bool:
    """Whether head line `number` belongs to an entry this PR adds whole: a new list item,
    array object, test function or module-level statement (not one whose opening line
    was only edited: the same item or function is removed from the base)."""
    side = _side(changed, True)
    python = changed.path.endswith((".py", ".pyi"))
    text = side.texts.get(number)
    if text is None:
        return False
    if changed.path.endswith(".json"):
        # JSON is often indented loosely: its objects are found by their braces.
        opener = _json_object(side, number)
        return opener is not None and opener in side.changed
    for n in (number, *_ancestors(side, number)):
        line = side.texts[n]
        top = indent_width(line) == 0
        if n == number and not (_ITEM_RE.match(line) or _ELEMENT_RE.match(line)):
            continue  # the setting's own line opens nothing (unless it is a list item)
        if n != number and _KEYED_OPENER_RE.match(line) and _among_entries(side, n):
            # a named entry of a collection of configs (`'gpt': {` next to `'default': {`)
            return n in side.changed and _identity(line) not in _removed_identities(changed)
        if (n != number and n in side.changed and _KEYED_OPENER_RE.match(line)
                and _identity(line) not in _removed_identities(changed)
                and _only_child_block(changed, side, n)):
            # a mapping added whole where its parent held nothing before (`acc:` under
            # an empty `benchmarks:`): new, not a section added to an existing entry
            return True
        if _opens_entry(line, python, top):
            if n not in side.changed:
                return False
            identity = _identity(line)
            return not identity or identity not in _removed_identities(changed)
        if top:
            return False
    return False


def _only_child_block(changed: ChangedFile, side: _Side, number: int) -> bool:
    """Whether every line under the parent of the mapping opened at `number` (itself
    included) is added and none is removed there: the parent was empty, so nothing in
    it had a value before. A top-level key has no parent to tell, and an unknown line
    answers no."""
    parents = _ancestors(side, number)
    if not parents or parents[0] in side.changed:
        return False
    parent = parents[0]
    indent = indent_width(side.texts[parent])
    end = parent
    for n in range(parent + 1, parent + _MAX_WALK):
        text = side.texts.get(n)
        if text is None:
            # The end of the file, or a line the patch does not show (maybe the parent's).
            if not last_line(changed, n - 1):
                return False
            break
        if _skip(text):
            continue
        if indent_width(text) <= indent:
            break
        if n not in side.changed:
            return False
        end = n
    return not _removes_code_within(changed, parent, end)


def _removes_code_within(changed: ChangedFile, first: int, last: int) -> bool:
    """Whether the diff removes a line of code (not blank, not a comment) between head
    lines `first` and `last`, or right after `last`: what the block held before (a
    line added back unchanged was not replaced)."""
    for hunk in changed.hunks:
        head = hunk.new_start - 1  # the head line the next removed line follows
        for line in hunk.lines:
            if line.new_no is not None:
                head = line.new_no
            elif first <= head <= last and not _skip(line.text) and (
                    line.old_no not in readded(hunk)):
                return True
    return False


def last_line(changed: ChangedFile, number: int) -> bool:
    """Whether head line `number` is the file's last. Without the full text a hunk
    tells: one that ends on a changed line (no trailing context) reaches the end."""
    full = changed.head_lines
    if full is not None:
        return number == len(full)
    for hunk in changed.hunks:
        if hunk.new_start + hunk.new_count - 1 == number and hunk.lines:
            return hunk.lines[-1].kind is not LineKind.CONTEXT
    return False


def _among_entries(side: _Side, number: int) -> bool:
    """Whether a keyed mapping has a sibling that is a keyed mapping too: then the keys
    name entries (configs, models), not the sections of one entry."""
    indent = indent_width(side.texts[number])
    k = bisect_left(side.numbers, number)
    for step in (-1, 1):
        j = k + step
        while 0 <= j < len(side.numbers) and abs(j - k) < 400:
            text = side.texts[side.numbers[j]]
            j += step
            if _skip(text):
                continue
            width = indent_width(text)
            if width < indent:
                break
            if width == indent and (_KEYED_OPENER_RE.match(text)
                                    or text.strip().rstrip(",") in ("}", ")")):
                return True  # a keyed mapping, or the end of one (`},`)
    return False


def _json_object(side: _Side, number: int) -> int | None:
    """The line opening the array element (an object) that holds head line `number`."""
    depth = 0
    k = bisect_left(side.numbers, number) - 1
    stop = max(-1, k - _MAX_WALK)
    while k > stop:
        n = side.numbers[k]
        k -= 1
        code = _STRING_RE.sub('""', side.texts[n])
        for at in range(len(code) - 1, -1, -1):
            ch = code[at]
            if ch in "}]":
                depth += 1
            elif ch in "{[":
                if depth:
                    depth -= 1
                    continue
                before = code[:at].strip(" \t,}[")
                if before.endswith(":") and before[:-1].strip() == '""':
                    continue  # a keyed value (`"extra_args": [`) inside the element
                # An element of an array: nothing but brackets and commas before it.
                return n if ch == "{" and not before else None
    return None


_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
_ROOT_RE = re.compile(r"[A-Za-z_]\w*")


def created_here(changed: ChangedFile, target: str) -> bool:
    """Whether the object an assignment sets a key or attribute of (`model['tp'] = 2`)
    is created by an added line of this file and by no removed one."""
    root = _ROOT_RE.match(target)
    if root is None or root.group() == target:
        return False
    pattern = re.compile(rf"^\s*{re.escape(root.group())}\s*=(?!=)")
    added = any(pattern.match(line.text) for line in changed.added_lines)
    return added and not any(pattern.match(line.text) for line in changed.removed_lines)
