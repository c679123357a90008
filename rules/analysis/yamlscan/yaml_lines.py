"""YAML line types and the linear, regex-free helpers that read one line's parts.

Rules see YAML that is hostile (PR content), partial (only the hunk context when
GitHub omits the file) or plain invalid, so nothing here parses YAML: each helper
reads a single line (or value) left to right, linear in its length.

`path` is the chain of enclosing keys, with `[]` for a sequence item, e.g. a step's
`env:` entry in a workflow has the path `("jobs", "build", "steps", "[]", "env")`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

ITEM = "[]"


@dataclass(frozen=True, slots=True)
class BlockScalar:
    """A `|` or `>` scalar: the key that opened it and the extent of its content."""

    key: str  # "" for a bare sequence item (`- |`)
    key_line: int  # 0 when the header is known only from a hunk's section line
    key_col: int  # column of the key (of the `-` for a bare item)
    style: str  # "|" literal, ">" folded
    chomping: str  # "" clip, "-" strip, "+" keep
    indicator: str  # the header as written after the colon, e.g. ">-", "|2"
    path: tuple[str, ...]  # enclosing keys plus the key itself
    content_indent: int  # -1 when the scalar has no content line
    first: int  # first content line, 0 when empty
    last: int  # last non-blank content line, 0 when empty

    @property
    def folded(self) -> bool:
        return self.style == ">"

    @property
    def header(self) -> str:
        """`key: >-` as a reader would recognise it."""
        return f"{self.key}: {self.indicator}" if self.key else f"- {self.indicator}"


class YamlLine(NamedTuple):
    # A NamedTuple rather than a frozen dataclass: a scan builds one per line and
    # several rules scan every YAML file of a PR, so construction cost dominates.
    number: int
    text: str
    indent: int
    kind: str  # key | item | text | comment | blank | doc | block
    path: tuple[str, ...]  # enclosing keys (the line's own key excluded)
    anchors: tuple[int, ...]  # line where each `path` element was opened (0: unknown)
    rooted: bool  # the path starts at the document root (not a partial hunk view)
    key: str | None = None
    value: str = ""  # the value after `key:` (or the item text), comment removed
    item: bool = False  # the line starts a sequence item
    col: int = 0  # column of the key (or of the text after `- `)
    opens: BlockScalar | None = None  # the scalar this key line opens
    block: BlockScalar | None = None  # the scalar this line is content of

    @property
    def full_path(self) -> tuple[str, ...]:
        return (*self.path, self.key) if self.key is not None else self.path



def indent_of(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def split_key(content: str) -> tuple[str, str] | None:
    """`key: rest` → (key, rest) for a mapping line, else None. Linear, no regex."""
    if not content or content[0] in "#{[&*!|>%@`,":
        return None
    if content[0] in "\"'":
        quote = content[0]
        end = _closing_quote(content, 0)
        if end < 0:
            return None
        after = content[end + 1 :].lstrip(" \t")
        if not after.startswith(":") or (len(after) > 1 and after[1] not in " \t"):
            return None
        key = content[1:end]
        if quote == "'":
            key = key.replace("''", "'")
        return key, after[1:].strip()
    i = content.find(":")
    while i != -1 and i + 1 < len(content) and content[i + 1] not in " \t":
        i = content.find(":", i + 1)
    if i <= 0:
        return None
    key = content[:i].rstrip()
    if " #" in key or "\t#" in key or not key:
        return None
    return key, content[i + 1 :].strip()


def _closing_quote(text: str, start: int) -> int:
    """Index of the quote closing the one at `start`, or -1."""
    quote = text[start]
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and i + 1 < n and text[i + 1] == "'":
                i += 2
                continue
            return i
        i += 1
    return -1


def strip_comment(value: str) -> str:
    """A YAML value without its trailing `# comment` (quotes respected)."""
    value = value.strip()
    if not value:
        return value
    if value[0] in "\"'":
        end = _closing_quote(value, 0)
        if end >= 0:
            return value[: end + 1]
        return value
    cut = len(value)
    for marker in (" #", "\t#"):
        at = value.find(marker)
        if 0 <= at < cut:
            cut = at
    return value[:cut].rstrip()


def unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return inner.replace("''", "'") if value[0] == "'" else inner
    return value


def block_header(value: str) -> tuple[str, str, int, str] | None:
    """(style, chomping, explicit indent or 0, indicator) when `value` opens a block scalar."""
    tokens = [t for t in value.split() if not t.startswith(("!", "&"))]
    if len(tokens) != 1:
        return None
    token = tokens[0]
    if token[0] not in "|>" or len(token) > 3:
        return None
    chomping = ""
    explicit = 0
    for ch in token[1:]:
        if ch in "+-" and not chomping:
            chomping = ch
        elif ch in "123456789" and not explicit:
            explicit = int(ch)
        else:
            return None
    return token[0], chomping, explicit, token

