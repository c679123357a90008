"""Retunes inside positional case tuples: `("qwen3-8b", 20, 128)` → `("qwen3-8b", 60, 128)`
under `@pytest.mark.parametrize("model,num_prompts,max_tokens", CASES)`.

The tuple carries no key, so the position is named by the file's parametrize name list
of the same arity (only when exactly one list has it: a guess is not a finding). From
the patch alone the file's other lists are unknown, so without the head text nothing
is read.
"""

from __future__ import annotations

import ast
import re

from bot.core.snapshot import ChangedFile, Hunk, LineKind
from rules.analysis.knobs import Change, Setting, normalize, number

_PARAMETRIZE_RE = re.compile(
    r"""parametrize\(\s*(?:\(\s*)?(["'])([A-Za-z_][\w]*(?:\s*,\s*[A-Za-z_]\w*)+)\1""")
_MAX_LINE = 400
_MAX_TEXT = 400_000


def _name_lists(text: str) -> dict[int, list[tuple[str, ...]]]:
    """Parametrize name lists of the file's head text, by arity."""
    by_arity: dict[int, list[tuple[str, ...]]] = {}
    for match in _PARAMETRIZE_RE.finditer(text[:_MAX_TEXT]):
        names = tuple(n.strip() for n in match.group(2).split(","))
        by_arity.setdefault(len(names), [])
        if names not in by_arity[len(names)]:
            by_arity[len(names)].append(names)
    return by_arity


def _elements(line: str) -> list[str] | None:
    """The elements of a one-line tuple (or `pytest.param(...)`) as written, else None."""
    text = line.strip().rstrip(",")
    if not text.startswith(("(", "pytest.param(")) or len(text) > _MAX_LINE:
        return None
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call):
        items = list(node.args)
    elif isinstance(node, ast.Tuple):
        items = list(node.elts)
    else:
        return None
    return [ast.unparse(item) for item in items]


def _setting(name: str, value: str, line: int) -> Setting:
    return Setting(normalize(name), name, value, True, line, (line,), True)


def tuple_changes(changed: ChangedFile, hunk: Hunk) -> list[Change]:
    """Numeric values changed at one position of a case tuple, named by parametrize."""
    text = changed.head_text
    if not changed.path.endswith(".py") or text is None:
        return []
    removed: list[str] = []
    pairs: list[tuple[str, str, int]] = []
    for line in hunk.lines:
        if line.kind is LineKind.REMOVED:
            removed.append(line.text)
        elif line.kind is LineKind.ADDED and removed and line.new_no is not None:
            pairs.append((removed.pop(0), line.text, line.new_no))
        else:
            removed = []
    if not pairs:
        return []
    lists = None
    found: list[Change] = []
    for old_line, new_line, number_ in pairs:
        old, new = _elements(old_line), _elements(new_line)
        if old is None or new is None or len(old) != len(new) or len(old) < 2:
            continue
        lists = _name_lists(text) if lists is None else lists
        names = lists.get(len(new), [])
        if len(names) != 1:
            continue
        for name, before, after in zip(names[0], old, new, strict=True):
            if before != after and number(before) is not None and number(after) is not None:
                found.append(Change(_setting(name, before, number_),
                                    _setting(name, after, number_)))
    return found
