"""The text of a PR description as a reader sees it: capped, split into prose and blocks.

Shared by the description readers (`ci_fix`, `evidence`, `references`). PR
bodies are hostile input (pasted 10 MB logs), so the text is capped and no pattern
nests quantifiers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_TEXT = 300_000

_HTML_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_FENCE_RE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")
_QUOTE_RE = re.compile(r"^[ \t]{0,3}>")


def clean(text: str) -> str:
    """The text that a reader sees: capped, without HTML comments (PR templates)."""
    return _HTML_COMMENT_RE.sub("", text[:MAX_TEXT])


def split_markdown(text: str) -> tuple[str, list[str]]:
    """(prose, blocks): fenced code and `>` quotes are blocks, the rest is prose."""
    prose: list[str] = []
    blocks: list[str] = []
    current: list[str] | None = None
    fence = ""
    quote: list[str] = []
    for line in text.splitlines():
        if current is not None:
            if line.lstrip().startswith(fence):
                blocks.append("\n".join(current))
                current = None
            else:
                current.append(line)
            continue
        match = _FENCE_RE.match(line)
        if match:
            fence = match.group(1)[:3]
            current = []
            continue
        if _QUOTE_RE.match(line):
            quote.append(line.lstrip()[1:])
            continue
        if quote:
            blocks.append("\n".join(quote))
            quote = []
        prose.append(line)
    if current is not None:  # an unclosed fence still holds pasted output
        blocks.append("\n".join(current))
    if quote:
        blocks.append("\n".join(quote))
    return "\n".join(prose), blocks


# A period inside "GLM-5.2" or "test_x.py" does not end a sentence.
_SENTENCE_RE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+[.!?]*")


def sentences(text: str) -> Iterable[str]:
    for match in _SENTENCE_RE.finditer(text):
        sentence = match.group(0).strip()
        if sentence:
            yield sentence


def quote(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
