"""Path globs with `**`, `*`, `?` and `{a,b}`, as used by surfaces and config ignores."""

from __future__ import annotations

import re
from functools import lru_cache


def expand_braces(pattern: str) -> list[str]:
    start = pattern.find("{")
    end = pattern.find("}", start + 1)
    if start < 0 or end < 0:
        return [pattern]
    head, tail = pattern[:start], pattern[end + 1 :]
    return [
        expanded
        for option in pattern[start + 1 : end].split(",")
        for expanded in expand_braces(head + option + tail)
    ]


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append(r"(?:[^/]*/)*")  # zero or more whole directories
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif pattern[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append(r"[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def glob_regex(pattern: str) -> str:
    """The regex source `compile_glob` compiles (for joining several globs into one)."""
    alternatives = "|".join(_translate(p) for p in expand_braces(pattern))
    return rf"(?:{alternatives})\Z"


@lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    return re.compile(glob_regex(pattern))


def glob_match(pattern: str, path: str) -> bool:
    return compile_glob(pattern).match(path) is not None


def validate_glob(pattern: str) -> str | None:
    """An error message when the pattern can't be used, else None."""
    if not pattern or pattern.count("{") != pattern.count("}"):
        return f"invalid glob {pattern!r}"
    return None
