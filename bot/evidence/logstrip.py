"""Turn one raw CI log line into the text a human (and the pattern catalog) reads.

CI systems decorate every line differently: GitHub Actions prefixes an ISO timestamp,
exported Buildkite logs a bracketed one, raw Buildkite logs (`GET …/log.txt`) an APC
escape `ESC _bk;t=<ms> BEL`, old CircleCI/Jenkins a wall-clock time, and text pasted
from the Buildkite web UI a `  | ` gutter. Colours come on top. Patterns are written
against the undecorated text, so every line goes through `strip_markers` first.
"""

from __future__ import annotations

import re

# APC (`ESC _ … BEL|ST`, Buildkite's timestamps) and OSC (`ESC ] … BEL|ST`, hyperlinks)
# carry a payload, so they are removed whole before the CSI colour codes.
_ESCAPES = re.compile(
    r"\x1b[_\]P^][^\x07\x1b]*(?:\x07|\x1b\\)?"  # APC / OSC / DCS / PM strings
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
    r"|\x1b[@-Z\\-_]"  # any other two-byte escape
)
# Everything else below 0x20 (except TAB) would garble a terminal or a JSON consumer.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
# One leading timestamp per line; CircleCI/Jenkins prefixes only when followed by text
# so a bare time in a table is left alone.
_PREFIX = re.compile(
    r"^(?:"
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?"  # GitHub Actions
    r"|\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\] ?"  # Buildkite export
    rf"|(?:{_MONTHS}) [ \d]\d \d\d:\d\d:\d\d (?=\S)"  # CircleCI
    r"|\d\d:\d\d:\d\d (?=\S)"  # Jenkins timestamper
    r")"
)
# Buildkite web UI gutter as copied into issues: "  | text".
_GUTTER = re.compile(r"^ {0,4}\| ?")
_BOM = "\ufeff"


def strip_markers(line: str) -> str:
    """The line without escapes, BOMs, CRs, one leading timestamp, gutter, trailing blanks."""
    if "\x1b" in line:
        line = _ESCAPES.sub("", line)
    line = line.replace(_BOM, "").replace("\r", "")
    line = _CONTROL.sub("", line)
    line = _PREFIX.sub("", line, count=1)
    if line.startswith((" ", "|")):
        line = _GUTTER.sub("", line, count=1)
    return line.rstrip()


def decode_line(raw: bytes) -> str:
    """Bytes of one line as text; logs are UTF-8 in practice but never trusted to be."""
    return raw.decode("utf-8", errors="replace")


def cap(text: str, limit: int) -> str:
    """`text` shortened to `limit` characters, with a visible ellipsis when cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"
