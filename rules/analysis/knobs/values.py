"""Knob values as written: numbers, and the value that follows a flag or a key.

Values are read from hostile text: every scan is bounded (a quoted string or a token,
an expression of at most 80 characters) and no regex nests quantifiers.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN_RE = re.compile(r"[^\s\"'`,;)\]}\\]+")
_NUMBER_RE = re.compile(r"[+-]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_WORD_LITERAL = frozenset({"true", "false", "none", "null"})
# `flag_value`'s answer when the flag's value is on a following line.
PENDING = "pending"


@lru_cache(maxsize=8192)
def number(value: str) -> float | None:
    """The value as a number when it is a plain numeric literal (quotes allowed)."""
    text = value.strip().strip("\"'")
    if not _NUMBER_RE.fullmatch(text):
        return None
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return None


def same_value(a: str, b: str) -> bool:
    x, y = number(a), number(b)
    if x is not None and y is not None:
        return x == y
    return a.strip().strip("\"'") == b.strip().strip("\"'")


def scan_value(text: str, pos: int, words: bool) -> tuple[str, bool] | None:
    """(value, literal) at `pos`: a quoted string, a token, or a short expression."""
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos >= n:
        return None
    if text[pos] in "\"'":
        end = text.find(text[pos], pos + 1)
        return (text[pos + 1 : end][:200], True) if end > 0 else None
    match = _TOKEN_RE.match(text, pos)
    if match is None:
        return None
    token = match.group()
    after = match.end()
    while after < n and text[after] in " \t":
        after += 1
    # Arithmetic only in Python (`timeout=2 * 60`); in shell `X=5 -v` the `-` starts a flag.
    operator = not words and after < n and text[after] in "*/+-%"
    if operator or "(" in token or "[" in token or "{" in token:
        depth, end = 0, pos
        while end < n and end - pos < 80:
            ch = text[end]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif ch in ",;#" and depth == 0:
                break
            end += 1
        return text[pos:end].strip(), False
    if number(token) is not None:
        return token, True
    if token.lower() in _WORD_LITERAL:
        return token, True
    return token, words and "$" not in token and "{{" not in token


def flag_value(code: str, start: int, end: int) -> tuple[str, bool] | str | None:
    """The value of the flag spanning code[start:end], `PENDING`, or None (no value)."""
    quote = code[start - 1] if start > 0 and code[start - 1] in "\"'" else ""
    rest = code[end : end + 400]
    if rest.startswith("="):
        return scan_value(code, end + 1, words=True)
    if quote and rest.startswith(quote):
        after = rest[1:].lstrip()
        if not after.startswith(","):
            return PENDING if not after else None
        after = after[1:].lstrip()
        if not after or after == "\\":
            return PENDING
        if after[0] in "\"'":
            return scan_value(after, 0, words=True)
        value = scan_value(after, 0, words=False)
        if value is None or number(value[0]) is None:
            return None
        return value
    if rest[:1] in (" ", "\t"):
        after = rest.lstrip()
        if not after or after == "\\":
            return PENDING
        if after[0] == "-" and not (len(after) > 1 and (after[1].isdigit() or after[1] == ".")):
            return None
        if quote and after[0] == quote:
            return None
        return scan_value(after, 0, words=True)
    return PENDING if not rest and not quote else None
