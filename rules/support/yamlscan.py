"""Line-based YAML structure: key paths by indentation, and block scalars.

Rules see YAML that is hostile (PR content), partial (only the hunk context when
GitHub omits the file) or plain invalid, so nothing here parses YAML. Each line is
classified once, left to right, with a stack of open keys: linear in the input, no
regex with nested quantifiers, and it works on any slice of a file.

`path` is the chain of enclosing keys, with `[]` for a sequence item, e.g. a step's
`env:` entry in a workflow has the path `("jobs", "build", "steps", "[]", "env")`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple, cast

from bot.snapshot import ChangedFile

ITEM = "[]"
YAML_SUFFIXES = (".yml", ".yaml")


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


@dataclass
class YamlView:
    """The scanned lines of one file, by head line number.

    `view()` shares one instance between all rules: treat it as read-only.
    """

    lines: dict[int, YamlLine] = field(default_factory=dict)
    full: bool = False  # built from the whole head text (paths are exact)

    def get(self, number: int) -> YamlLine | None:
        return self.lines.get(number)

    def __iter__(self) -> Iterator[YamlLine]:
        return iter(self.lines.values())


def is_yaml(path: str) -> bool:
    return path.lower().endswith(YAML_SUFFIXES)


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


def view(changed: ChangedFile) -> YamlView:
    """Scan a changed file: its head text when known, else each hunk's visible lines.

    Several rules scan the same YAML file, so the view is computed once per file and
    kept with it (`ChangedFile.derived`); callers must not modify it.
    """
    cached = changed.derived.get(_VIEW_KEY)
    if cached is None:
        cached = changed.derived[_VIEW_KEY] = fresh_view(changed)
    return cast(YamlView, cached)


_VIEW_KEY = "yamlscan.view"


def fresh_view(changed: ChangedFile) -> YamlView:
    """`view` without the per-file cache."""
    lines = changed.head_lines
    if lines is not None:
        scanned = scan(enumerate(lines, start=1), full=True)
        return YamlView({line.number: line for line in scanned}, full=True)
    result = YamlView(full=False)
    for hunk in changed.hunks:
        visible = [(line.new_no, line.text) for line in hunk.lines if line.new_no is not None]
        for line in scan(visible, full=False, section=hunk.section):
            result.lines[line.number] = line
    return result
