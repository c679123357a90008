"""Values paired within one keyed entry of a Python or JSON table.

A table keyed by model (`MODEL_RUN_INFO = {"org/Model-7B": ("… max_model_len=4096 …"),
…}`) loses two entries and gains one in a PR: the diff lines up the removed entry's
`max_model_len=4096` with the next entry's `8192`, and "4096 → 8192" is a change nobody
made. A pair is kept only when both values sit under the same key; otherwise the head
value is paired with the value its own key had (when that key is in the base), or is
left unasked (its entry is new, or was restructured). YAML is `keypaths`' business.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import Change
from rules.analysis.lines import sides
from rules.analysis.yamlscan import is_yaml

# A quoted key whose value is a container or follows on the next lines.
_KEY_RE = re.compile(r"^(\s*)[\"']([^\"'\n]{1,160})[\"']\s*:\s*(?:[\[{(].*)?$")
_SUFFIXES = (".py", ".pyi", ".json")
_WALK = 60  # lines walked up from a value to its key


def split_across_keys(changed: ChangedFile, hunk: Hunk,
                      changes: Sequence[Change]) -> list[Change]:
    """The changes re-paired so that old and new values share a table key."""
    if is_yaml(changed.path) or not changed.path.endswith(_SUFFIXES) or not any(
            c.old is not None and c.new is not None for c in changes):
        return list(changes)
    old_side, new_side = sides(hunk)
    base = {n: text for n, text, _ in old_side}
    head = {n: text for n, text, _ in new_side}
    crossing = [c for c in changes if c.old is not None and c.new is not None
                and _differ(_key(base, c.old.line), _key(head, c.new.line))]
    if not crossing:
        return list(changes)
    names = {c.setting.name for c in crossing}
    out = [c for c in changes if c.setting.name not in names]
    for name in names:
        mine = [c for c in changes if c.setting.name == name]
        olds = [c.old for c in mine if c.old is not None]
        keys = [_key(base, old.line) for old in olds]
        taken: set[int] = set()
        for change in mine:
            new = change.new
            if new is None:
                continue
            where = _key(head, new.line)
            match = next((k for k, key in enumerate(keys)
                          if k not in taken and not _differ(key, where)), None)
            if match is not None:
                taken.add(match)
                out.append(Change(olds[match], new))
            elif change.old is None:
                out.append(change)
            # else: its counterpart was under another key: say nothing
        out += [Change(old, None) for k, old in enumerate(olds) if k not in taken]
    return out


def _differ(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a != b


def _key(lines: Mapping[int, str], number: int) -> str | None:
    """The table key a line sits under: the nearest quoted `"key":` line above it at its
    indentation or less, before the table's own opening line."""
    own = lines.get(number)
    if own is None:
        return None
    indent = len(own) - len(own.lstrip())
    for n in range(number, max(0, number - _WALK), -1):
        text = lines.get(n)
        if text is None:
            return None  # left the hunk's view: unknown
        body = text.lstrip()
        if not body or body.startswith(("#", "//")):
            continue
        depth = len(text) - len(body)
        match = _KEY_RE.match(text[:400])
        if match is not None and depth <= indent and n != number:
            return match.group(2)
        if depth < indent:
            return None  # the table's opening line: no key
    return None
