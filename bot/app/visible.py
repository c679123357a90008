"""Which lines of a comment GitHub shows as ordinary text: CommonMark parsing with
markdown-it (GitHub renders with cmark-gfm; both follow the CommonMark spec).

Hand-written fence scanning got nested fences, `~~~` inside a ``` fence, indented
code, HTML comments and `<pre>` wrong; a real parser gets them right by construction.
"""

from __future__ import annotations

import html
import re
from collections import deque
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML

# GitHub's tables and strikethrough; HTML stays on (GitHub passes a safe subset through).
_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# The block structure alone is linear in the text; inline parsing (quadratic on some
# inputs, e.g. thousands of `[`) runs only on paragraphs that have a command line.
_BLOCKS = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("inline")
_RENDERER = RendererHTML()
# Rendered spans whose text GitHub does not show as prose: comments, code, collapsed blocks.
_HIDDEN_RE = re.compile(
    r"<!--.*?(?:-->|\Z)|<(pre|code|details|textarea|script|style|template)\b.*?(?:</\1\s*>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_TAG_RE = re.compile(r"<[^>]*>")
# Inline parsing is quadratic on some inputs (thousands of `[` took seconds), so only
# this much paragraph text with command lines is parsed per comment; commands in
# paragraphs past it are not run (a command is a short paragraph of its own).
INLINE_BUDGET = 6_000
# HTML blocks whose content after a blank line is still hidden (or quoted) until they close.
_DEPTH_TAGS = ("details", "blockquote")
_OPEN_RE = {t: re.compile(rf"<{t}\b", re.IGNORECASE) for t in _DEPTH_TAGS}
_CLOSE_RE = {t: re.compile(rf"</{t}\s*>", re.IGNORECASE) for t in _DEPTH_TAGS}


def _visible(content: str) -> list[str]:
    """The text lines a reader sees in one paragraph."""
    tokens = _MD.parseInline(content)
    if not tokens:
        return []
    rendered = _RENDERER.renderInline(tokens[0].children or [], _MD.options, {})
    text = _TAG_RE.sub("", _HIDDEN_RE.sub("\x00", rendered))
    return [html.unescape(line).rstrip() for line in text.split("\n")]


def _render_line(line: str) -> str:
    lines = _visible(line)
    return lines[0] if lines else ""


def visible_command_lines(body: str, prefix: str) -> Iterator[str]:
    """Raw lines of `body` that start with `prefix` and that GitHub shows as the start
    of a line of a top-level paragraph (not quoted, listed, hidden or code)."""
    if prefix not in body:
        return  # most comments: no parsing at all
    tokens = _BLOCKS.parse(body)
    source = body.splitlines()
    depth = dict.fromkeys(_DEPTH_TAGS, 0)
    budget = INLINE_BUDGET
    for index, token in enumerate(tokens):
        if token.type == "html_block" and token.level == 0:
            for tag in _DEPTH_TAGS:
                opened = len(_OPEN_RE[tag].findall(token.content))
                closed = len(_CLOSE_RE[tag].findall(token.content))
                depth[tag] = max(0, depth[tag] + opened - closed)
            continue
        if (token.type != "inline" or token.level != 1 or any(depth.values())
                or tokens[index - 1].type != "paragraph_open" or token.map is None):
            continue
        start, end = token.map
        if not any(line.startswith(prefix) for line in source[start:end]):
            continue
        budget -= len(token.content)
        if budget < 0:
            return
        shown = [line for line in _visible(token.content) if line.startswith(prefix)]
        # Each shown command line is matched to the raw line that renders the same, in
        # order, so arguments keep their exact text (`__init__.py` is not emphasis).
        by_render: dict[str, deque[str]] = {}
        for line in source[start:end]:
            if line.startswith(prefix):
                by_render.setdefault(_render_line(line.rstrip()), deque()).append(line.rstrip())
        for seen in shown:
            candidates = by_render.get(seen)
            if candidates:
                yield candidates.popleft()
