"""The YAML line scanner as first written (a stack of entries, one object per line),
kept as the reference the faster scanner in `rules.analysis.yamlscan.scanner` is tested against."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rules.analysis.yamlscan.yaml_lines import (
    ITEM,
    BlockScalar,
    YamlLine,
    block_header,
    indent_of,
    split_key,
    strip_comment,
)


@dataclass
class _Entry:
    indent: int
    name: str
    line: int


@dataclass
class _Pending:
    """A block scalar whose content is still being read."""

    key_line: YamlLine
    key: str
    key_col: int
    style: str
    chomping: str
    indicator: str
    path: tuple[str, ...]
    anchors: tuple[int, ...]
    content_indent: int  # -1 until the first content line
    lines: list[tuple[int, str]] = field(default_factory=list)

    def accepts(self, text: str) -> bool:
        if not text.strip():
            return True
        if text.startswith(("---", "...")) and (len(text) == 3 or text[3] in " \t"):
            return False
        ind = indent_of(text)
        if self.content_indent < 0:
            if ind > self.key_col:
                self.content_indent = ind
                return True
            return False
        return ind >= self.content_indent

    def close(self, rooted: bool) -> tuple[list[YamlLine], list[tuple[int, str]]]:
        """The key line and content lines; trailing blank lines are handed back."""
        last = -1
        for i, (_, text) in enumerate(self.lines):
            if text.strip():
                last = i
        content = self.lines[: last + 1]
        rest = self.lines[last + 1 :]
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
            out.append(_replace_opens(self.key_line, scalar))
        anchors = (*self.anchors, self.key_line.number)
        for number, text in content:
            out.append(YamlLine(
                number=number, text=text, indent=indent_of(text), kind="block",
                path=self.path, anchors=anchors, rooted=rooted, value=text.strip(),
                block=scalar,
            ))
        return out, rest


def _replace_opens(line: YamlLine, scalar: BlockScalar) -> YamlLine:
    return YamlLine(
        number=line.number, text=line.text, indent=line.indent, kind=line.kind,
        path=line.path, anchors=line.anchors, rooted=line.rooted, key=line.key,
        value=line.value, item=line.item, col=line.col, opens=scalar,
    )


class _Scanner:
    def __init__(self, full: bool) -> None:
        self.full = full
        self.stack: list[_Entry] = []
        self.pending: _Pending | None = None
        self.out: list[YamlLine] = []

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
            self.stack.append(_Entry(0, key, 0))

    def rooted(self, indent: int) -> bool:
        return self.full or indent == 0 or bool(self.stack and self.stack[0].indent == 0)

    def feed(self, number: int, text: str) -> None:
        text = text.rstrip("\r\n")
        if self.pending is not None:
            if self.pending.accepts(text):
                self.pending.lines.append((number, text))
                return
            self.flush()
        self.line(number, text)

    def flush(self) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        emitted, rest = pending.close(pending.key_line.rooted)
        self.out.extend(emitted)
        for number, text in rest:
            self.line(number, text)

    def names(self, below: int | None = None) -> tuple[tuple[str, ...], tuple[int, ...]]:
        entries = [e for e in self.stack if below is None or e.indent < below]
        return tuple(e.name for e in entries), tuple(e.line for e in entries)

    def line(self, number: int, text: str) -> None:
        ind = indent_of(text)
        body = text[ind:]
        if not body.strip():
            path, anchors = self.names(ind)
            self.out.append(YamlLine(number, text, ind, "blank", path, anchors, self.rooted(ind)))
            return
        if body.startswith("#") or body.startswith("\t#"):
            path, anchors = self.names(ind)
            self.out.append(YamlLine(number, text, ind, "comment", path, anchors,
                                     self.rooted(ind)))
            return
        if ind == 0 and body.startswith(("---", "...")) and (len(body) == 3 or body[3] in " \t"):
            self.stack.clear()
            self.out.append(YamlLine(number, text, 0, "doc", (), (), True))
            return
        col = ind
        content = body
        item = False
        while content == "-" or content.startswith(("- ", "-\t")):
            while self.stack and (self.stack[-1].indent > col or (
                    self.stack[-1].indent == col and self.stack[-1].name == ITEM)):
                self.stack.pop()
            self.stack.append(_Entry(col, ITEM, number))
            item = True
            rest = content[1:]
            stripped = rest.lstrip(" \t")
            col += 1 + len(rest) - len(stripped)
            content = stripped
            if not content:
                break
        rooted = self.rooted(ind)
        kv = split_key(content) if content else None
        if kv is not None:
            key, raw = kv
            while self.stack and self.stack[-1].indent >= col:
                self.stack.pop()
            path, anchors = self.names()
            value = strip_comment(raw)
            line = YamlLine(number, text, ind, "key", path, anchors, rooted, key=key,
                            value=value, item=item, col=col)
            self.stack.append(_Entry(col, key, number))
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
            path, anchors = self.names()
            value = strip_comment(content)
            line = YamlLine(number, text, ind, "item", path, anchors, rooted, value=value,
                            item=True, col=col)
            header = block_header(value) if value and value[0] in "|>!&" else None
            if header is not None:
                style, chomping, explicit, indicator = header
                dash = self.stack[-1].indent
                self.pending = _Pending(line, "", dash, style, chomping, indicator, path,
                                        anchors[:-1], dash + explicit if explicit else -1)
                return
            self.out.append(line)
            return
        path, anchors = self.names(col)
        self.out.append(YamlLine(number, text, ind, "text", path, anchors, rooted,
                                 value=strip_comment(content), col=col))


def reference_scan(numbered: Iterable[tuple[int, str]], *, full: bool = True,
                   section: str = "") -> list[YamlLine]:
    """Classify consecutive lines (number, text) of one YAML document stream."""
    scanner = _Scanner(full)
    if section:
        scanner.seed(section)
    for number, text in numbered:
        scanner.feed(number, text)
    scanner.flush()
    return scanner.out
