"""One compiled scan for the word runs of a text that may name a wanted knob.

`KnobFilter.present` is asked about every hunk side of a PR. Splitting a side into
all of its `[\\w-]` runs and testing each costs a Python step per distinct run; most
runs name nothing. Every name a glob matches contains the glob's longest literal
piece, so a run can only hold a wanted word if it contains one of those pieces: one
RE2 pass (a DFA, linear, at C speed) returns exactly those runs, and only they are
tested. The answer is the same set of words (tests/rules/test_knob_run_scanner.py);
without RE2, or on non-ASCII text, or for a glob with no literal piece (`*`), the
caller splits the text into all its runs as before.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from bot.core.globs import expand_braces

# A word's normalized name is lowercase ASCII letters, digits and `-` (`_` becomes `-`).
_NAME_PIECE_RE = re.compile(r"[a-z0-9-]+")
_WILDCARDS_RE = re.compile(r"[*?]")


def _re2() -> Any:
    try:
        return importlib.import_module("re2")
    except ImportError:
        return None


def literal_pieces(globs: Iterable[str]) -> set[str] | None:
    """For each normalized glob alternative, its longest literal piece; None when one has
    none (it may match any name). Alternatives whose piece holds a character no name can
    hold (`.`, `/`) never match a name and need no piece."""
    pieces: set[str] = set()
    for glob in globs:
        for alternative in expand_braces(glob):
            # `**/` matches zero directories in a name (which has no `/`), `**` as `*`.
            parts = _WILDCARDS_RE.split(alternative.replace("**/", ""))
            longest = max(parts, key=len)
            if not longest:
                return None
            if _NAME_PIECE_RE.fullmatch(longest):
                pieces.add(longest)
    return pieces


def run_scanner(pieces: set[str] | None) -> Callable[[str], list[str]] | None:
    """`findall` over an ASCII text: every `[\\w-]` run containing one of `pieces` (as a
    name reads it: any case, `_` for `-`); None without RE2 or without pieces to find."""
    if not pieces:
        return None
    re2 = _re2()
    if re2 is None:
        return None
    alternatives = "|".join(
        "".join("[-_]" if ch == "-" else ch for ch in piece)
        for piece in sorted(pieces, key=lambda p: (-len(p), p)))
    # From a run's first character `[\w-]*` can reach any piece inside it, and the
    # trailing `[\w-]*` takes the rest of the run: each match is one whole run.
    options = re2.Options()
    options.max_mem = 64 << 20
    compiled = re2.compile(rf"[\w-]*(?i:{alternatives})[\w-]*", options)
    regexp, anchor = getattr(compiled, "_regexp", None), getattr(re2, "_Anchor", None)
    if regexp is None or not hasattr(regexp, "Match") or anchor is None:
        return compiled.findall  # type: ignore[no-any-return]
    # The wrapper's `findall` maps byte offsets back to characters in Python for a str;
    # on ASCII text they are the same, so the engine is called on the bytes directly.
    match, unanchored = regexp.Match, anchor.UNANCHORED

    def findall(text: str) -> list[str]:
        data = text.encode("ascii")
        pos, end = 0, len(data)
        runs: list[str] = []
        while True:
            start, stop = match(unanchored, data, pos, end)[0]
            if start < 0 or stop == start:
                return runs
            runs.append(text[start:stop])
            pos = stop

    return findall
