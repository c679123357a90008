"""The YAML line scanner: classifies each line of a YAML slice with its key path.

Each line is classified once, left to right, with a stack of open keys: linear in
the input, no regex with nested quantifiers, and it works on any slice of a file
(a whole head text, or the visible lines of one hunk).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from rules.analysis.yamlscan.yaml_lines import (
    ITEM,
    BlockScalar,
    YamlLine,
    block_header,
    split_key,
    strip_comment,
)

_new_line = tuple.__new__  # YamlLine from a full positional tuple, skipping __new__'s frame


class _Pending:
    """A block scalar whose content is still being read."""

    __slots__ = ("anchors", "chomping", "content_indent", "indicator", "key", "key_col",
                 "key_line", "lines", "path", "style")

    def __init__(self, key_line: YamlLine, key: str, key_col: int, style: str, chomping: str,
                 indicator: str, path: tuple[str, ...], anchors: tuple[int, ...],
                 content_indent: int) -> None:
        self.key_line = key_line
        self.key = key
        self.key_col = key_col
        self.style = style
        self.chomping = chomping
        self.indicator = indicator
        self.path = path
        self.anchors = anchors
        self.content_indent = content_indent  # -1 until the first content line
        self.lines: list[tuple[int, str]] = []

    def accepts(self, text: str) -> bool:
        body = text.lstrip(" ")
        if not body or body.isspace():
            return True
        if text[:3] in ("---", "...") and (len(text) == 3 or text[3] in " \t"):
            return False
        ind = len(text) - len(body)
        if self.content_indent < 0:
            if ind > self.key_col:
                self.content_indent = ind
                return True
            return False
        return ind >= self.content_indent

    def close(self, rooted: bool) -> tuple[list[YamlLine], list[tuple[int, str]]]:
        """The key line and content lines; trailing blank lines are handed back."""
        lines = self.lines
        last = len(lines) - 1
        while last >= 0 and (not lines[last][1] or lines[last][1].isspace()):
            last -= 1
        content = lines[: last + 1]
        rest = lines[last + 1 :]
        scalar = BlockScalar(
            key=self.key,
            key_line=self.key_line.number,
            key_col=self.key_col,
            style=self.style,
            chomping=self.chomping,
            indicator=self.indicator,
            path=self.path,
            content_indent=self.content_indent if content else -1,
            first=content[0][0] if content else 0,
            last=content[-1][0] if content else 0,
        )
        out: list[YamlLine] = []
        if self.key_line.number:
            out.append(self.key_line._replace(opens=scalar))
        anchors = (*self.anchors, self.key_line.number)
        path = self.path
        for number, text in content:
            out.append(_new_line(YamlLine, (
                number, text, len(text) - len(text.lstrip(" ")), "block", path, anchors,
                rooted, None, text.strip(), False, 0, None, scalar)))
        return out, rest


class _Scanner:
    """The stack of open keys as parallel lists; indents never decrease along it."""

    __slots__ = ("_anchors", "_path", "full", "indents", "names", "numbers", "out", "pending")

    def __init__(self, full: bool) -> None:
        self.full = full
        self.indents: list[int] = []
        self.names: list[str] = []
        self.numbers: list[int] = []
        # The stack as tuples, built on first use after a change (None: stale): most
        # lines share them, and an item line changes the stack twice before reading it.
        self._path: tuple[str, ...] | None = ()
        self._anchors: tuple[int, ...] = ()
        self.pending: _Pending | None = None
        self.out: list[YamlLine] = []

    def push(self, indent: int, name: str, number: int) -> None:
        self.indents.append(indent)
        self.names.append(name)
        self.numbers.append(number)
        self._path = None

    def pop_to(self, size: int) -> None:
        del self.indents[size:], self.names[size:], self.numbers[size:]
        if self._path is not None:
            self._path = self._path[:size]
            self._anchors = self._anchors[:size]

    def context(self) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """Path and anchors of every open key."""
        if self._path is None:
            self._path = tuple(self.names)
            self._anchors = tuple(self.numbers)
        return self._path, self._anchors

    def seed(self, section: str) -> None:
        """Start from the top-level line git names in a hunk header (`@@ … @@ jobs:`)."""
        section = section.rstrip()
        if not section or section[0] in " \t#-":
            return
        kv = split_key(section)
        if kv is None:
            return
        key, raw = kv
        value = strip_comment(raw)
        header = block_header(value) if value else None
        if header is not None:
            style, chomping, explicit, indicator = header
            stub = YamlLine(number=0, text=section, indent=0, kind="key", path=(),
                            anchors=(), rooted=True, key=key, value=value)
            self.pending = _Pending(stub, key, 0, style, chomping, indicator, (key,), (),
                                    explicit if explicit else -1)
        elif not value:
            self.push(0, key, 0)

    def names_below(self, below: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """Path and anchors of the open keys indented less than `below` (a stack prefix)."""
        path, anchors = self.context()
        indents = self.indents
        if not indents or indents[-1] < below:
            return path, anchors
        k = bisect_left(indents, below)
        return path[:k], anchors[:k]

    def flush(self) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        emitted, rest = pending.close(pending.key_line.rooted)
        self.out.extend(emitted)
        for number, text in rest:
            self.line(number, text)

    def line(self, number: int, text: str) -> None:
        body = text.lstrip(" ")
        ind = len(text) - len(body)
        indents = self.indents
        rooted = self.full or ind == 0 or (bool(indents) and indents[0] == 0)
        if not body or body.isspace():
            path, anchors = self.names_below(ind)
            self.out.append(_new_line(YamlLine, (
                number, text, ind, "blank", path, anchors, rooted, None, "", False, 0,
                None, None)))
            return
        first = body[0]
        if first == "#" or (first == "\t" and body[1:2] == "#"):
            path, anchors = self.names_below(ind)
            self.out.append(_new_line(YamlLine, (
                number, text, ind, "comment", path, anchors, rooted, None, "", False, 0,
                None, None)))
            return
        if (ind == 0 and body[:3] in ("---", "...")
                and (len(body) == 3 or body[3] in " \t")):
            self.pop_to(0)
            self.out.append(_new_line(YamlLine, (
                number, text, 0, "doc", (), (), True, None, "", False, 0, None, None)))
            return
        col = ind
        content = body
        item = False
        while first == "-" and (len(content) == 1 or content[1] in " \t"):
            names = self.names
            size = len(indents)
            while size and (indents[size - 1] > col or (
                    indents[size - 1] == col and names[size - 1] == ITEM)):
                size -= 1
            if size < len(indents):
                self.pop_to(size)
            self.push(col, ITEM, number)
            item = True
            rest = content[1:]
            stripped = rest.lstrip(" \t")
            col += 1 + len(rest) - len(stripped)
            content = stripped
            if not content:
                break
            first = content[0]
        kv = split_key(content) if content else None
        if kv is not None:
            key, raw = kv
            size = len(indents)
            while size and indents[size - 1] >= col:
                size -= 1
            if size < len(indents):
                self.pop_to(size)
            path, anchors = self.context()
            # `raw` is stripped already: only a `#` or a leading quote needs the full cut.
            value = strip_comment(raw) if "#" in raw or raw[:1] in ("'", '"') else raw
            line = _new_line(YamlLine, (
                number, text, ind, "key", path, anchors, rooted, key, value, item, col,
                None, None))
            self.push(col, key, number)
            header = block_header(value) if value and value[0] in "|>!&" else None
            if header is not None:
                style, chomping, explicit, indicator = header
                self.pending = _Pending(line, key, col, style, chomping, indicator,
                                        (*path, key), anchors,
                                        col + explicit if explicit else -1)
                return
            self.out.append(line)
            return
        if item:
            path, anchors = self.context()
            value = strip_comment(content)
            line = _new_line(YamlLine, (
                number, text, ind, "item", path, anchors, rooted, None, value, True, col,
                None, None))
            header = block_header(value) if value and value[0] in "|>!&" else None
            if header is not None:
                style, chomping, explicit, indicator = header
                dash = indents[-1]
                self.pending = _Pending(line, "", dash, style, chomping, indicator, path,
                                        anchors[:-1], dash + explicit if explicit else -1)
                return
            self.out.append(line)
            return
        path, anchors = self.names_below(col)
        self.out.append(_new_line(YamlLine, (
            number, text, ind, "text", path, anchors, rooted, None, strip_comment(content),
            False, col, None, None)))


def scan(numbered: Iterable[tuple[int, str]], *, full: bool = True,
         section: str = "") -> list[YamlLine]:
    """Classify consecutive lines (number, text) of one YAML document stream."""
    scanner = _Scanner(full)
    if section:
        scanner.seed(section)
    line = scanner.line
    for number, text in numbered:
        text = text.rstrip("\r\n")
        pending = scanner.pending
        if pending is not None:
            if pending.accepts(text):
                pending.lines.append((number, text))
                continue
            scanner.flush()
        line(number, text)
    scanner.flush()
    return scanner.out
