"""Where a patch sits: setUp/fixture overrides that make it redundant, sibling idioms."""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.core.snapshot import PullRequestSnapshot
from rules.analysis.lines import openers
from rules.analysis.siblings import sibling_texts
from rules.parallel_state_patch.detect import PATCH_STR_RE

_OVERRIDE_RE = re.compile(r"(?<![\w.])[\w.]*\(\)\.override\([^()]{0,120}\)|\.override\(")
_DEF_RE = re.compile(r"^\s*(?:async\s+)?(def|class)\s+(\w+)\s*(\([^)]{0,300}\)?)?")
_SETUP_NAMES = frozenset({"setUp", "setUpClass", "asyncSetUp", "setup_method", "setup_class"})

Override = tuple[int, str, int, str]  # def line, def name, class line or 0, override text


def sibling_idiom(snapshot: PullRequestSnapshot, path: str, statement: str) -> bool:
    """Most sibling tests patch the same target: the repository's idiom, not this PR's."""
    target = PATCH_STR_RE.search(statement)
    texts = sibling_texts(snapshot, path) if target is not None else None
    if target is None or not texts:
        return False
    quoted = (f'"{target.group(2)}"', f"'{target.group(2)}'")
    same = sum(any(q in text for q in quoted) for text in texts)
    return same >= 2 and 2 * same >= len(texts)


def _enclosing(lines: Mapping[int, str], number: int) -> list[tuple[str, str, int, str]]:
    """Enclosing def/class of a line, innermost first: (kind, name, line, signature)."""
    return [(match.group(1), match.group(2), back, match.group(3) or "")
            for back, text in openers(lines, number, 3000) if (match := _DEF_RE.match(text))]


def overrides(lines: Mapping[int, str]) -> list[Override]:
    """The setUp methods and fixtures of the file that apply a parallel override."""
    found: list[Override] = []
    for number, text in lines.items():
        if ".override(" not in text:
            continue
        chain = _enclosing(lines, number)
        defs = [c for c in chain if c[0] == "def"]
        if not defs:
            continue
        _, name, at, _ = defs[0]
        decorators = " ".join(lines.get(n, "") for n in range(max(1, at - 4), at))
        fixture = "fixture" in decorators
        if name not in _SETUP_NAMES and not fixture:
            continue
        if fixture and "autouse" not in decorators:
            name = f"fixture:{name}"
        klass = next((c[2] for c in chain if c[0] == "class"), 0)
        match = _OVERRIDE_RE.search(text)
        override = match.group(0) if match and match.group(0) != ".override(" else \
            "get_parallel().override(...)"
        found.append((at, name, klass, override))
    return found


def redundant_with(lines: Mapping[int, str], number: int,
                   applied: list[Override]) -> tuple[int, str, str] | None:
    """The setUp or fixture (line, name, override) already in force at `number`."""
    if not applied:
        return None
    chain = _enclosing(lines, number)
    klass = next((c[2] for c in chain if c[0] == "class"), 0)
    test_sig = next((c[3] for c in chain if c[0] == "def"), "")
    for at, name, override_class, override in applied:
        if name.startswith("fixture:"):
            fixture = name.split(":", 1)[1]
            if re.search(rf"\b{re.escape(fixture)}\b", test_sig):
                return at, fixture, override
            continue
        if name in _SETUP_NAMES and override_class != klass:
            continue
        return at, name, override
    return None
