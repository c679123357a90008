"""Make hostile text (PR titles, YAML values, log lines) safe inside our Markdown.

Without this a PR author could break the summary table, forge our hidden markers,
or make the bot @-mention people.
"""

from __future__ import annotations

import re

_MENTION_RE = re.compile(r"@(?=[A-Za-z0-9])")
_HTML_RE = re.compile(r"<(?=[!/A-Za-z?])")


def text(value: str) -> str:
    """Plain prose: no mentions, no raw HTML (so no forged `<!-- ci-stability… -->`)."""
    value = _MENTION_RE.sub("@\u200b", value)
    return _HTML_RE.sub("&lt;", value)


def cell(value: str) -> str:
    """One table cell: single line, pipes escaped."""
    return text(value).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace(
        "\n", "<br>"
    )


def code(value: str) -> str:
    """An inline code span that survives backticks and carries no hidden marker."""
    # A code span hides nothing from a search of the raw body: break comment openers
    # (a forged marker) with a zero-width space; it renders the same.
    value = value.replace("\n", " ").replace("\r", " ").replace("<!--", "<\u200b!--")
    fence = "`"
    while fence in value:
        fence += "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def fenced(value: str, info: str = "") -> str:
    """A fenced block that the value cannot close early."""
    fence = "```"
    while fence in value:
        fence += "`"
    return f"{fence}{info}\n{value}\n{fence}"
