"""Unified diff parsing: `git diff`, `git format-patch` and GitHub's per-file `patch`.

The parser never raises on bad input: a file whose patch cannot be read keeps the
hunks read so far and carries a `patch_error`, and the rest of the diff still parses.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.core.hunk_body import FIRST_CHAR, body_end, body_fast, body_loop
from bot.core.snapshot import Hunk

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_DIFF_GIT_RE = re.compile(r'^diff --git (?:"?a/)(.+?)"? (?:"?b/)(.+?)"?$')
_OCTAL_ESCAPE_RE = re.compile(rb"\\([0-7]{3})")


@dataclass
class FilePatch:
    path: str
    previous_path: str | None = None
    status: str = "modified"
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False
    error: str | None = None


def _unquote(path: str) -> str:
    """Undo git's C-style quoting of unusual file names (`"a/t\\303\\251st.py"`)."""
    if not path.startswith('"'):
        return path
    raw = path.strip('"').encode("utf-8", "surrogateescape")
    raw = _OCTAL_ESCAPE_RE.sub(lambda m: bytes([int(m.group(1), 8)]), raw)
    raw = raw.replace(b'\\"', b'"').replace(b"\\t", b"\t").replace(b"\\\\", b"\\")
    return raw.decode("utf-8", "replace")


def _strip_prefix(name: str) -> str | None:
    name = _unquote(name.split("\t", 1)[0].rstrip())
    if name == "/dev/null":
        return None
    if name[:2] in ("a/", "b/"):
        return name[2:]
    return name


def parse_hunks(lines: list[str], start: int = 0) -> tuple[list[Hunk], int, str | None]:
    """Parse consecutive hunks from `lines[start:]`.

    Returns the hunks, the index of the first line not consumed, and an error message
    when a hunk is malformed (the hunks before it are kept).
    """
    hunks: list[Hunk] = []
    i = start
    n = len(lines)
    # The first character of every line, for C-speed counting over hunk bodies; an
    # empty line (a context line stripped of its space) sends hunks down the slow path.
    tags = "".join(map(FIRST_CHAR, lines)) if "" not in lines else None
    while i < n:
        header = lines[i]
        if not header.startswith("@@"):
            break
        match = _HUNK_RE.match(header)
        if match is None:
            return hunks, i + 1, f"malformed hunk header: {header[:80]!r}"
        old_start = int(match.group(1))
        old_count = 1 if match.group(2) is None else int(match.group(2))
        new_start = int(match.group(3))
        new_count = 1 if match.group(4) is None else int(match.group(4))
        i += 1
        end = body_end(tags, i, n, old_count, new_count) if tags is not None else -1
        if end >= 0:
            body = body_fast(lines, tags or "", i, end, old_start, new_start)
            i = end
            while i < n and lines[i].startswith("\\"):
                i += 1
            error = None
        else:
            body, i, error = body_loop(lines, i, old_start, old_count, new_start, new_count)
        hunk = Hunk(old_start, old_count, new_start, new_count, match.group(5), body)
        hunks.append(hunk)
        if error is not None:
            return hunks, i, error
    return hunks, i, None


def parse_file_patch(patch: str) -> tuple[list[Hunk], str | None]:
    """Parse GitHub's per-file `patch` field (hunks only, no file headers)."""
    lines = patch.splitlines()
    hunks, end, error = parse_hunks(lines)
    if error is None and end < len(lines) and any(line.strip() for line in lines[end:]):
        error = f"unexpected text after the last hunk: {lines[end][:60]!r}"
    return hunks, error


def _split_files(lines: list[str], text: str | None = None) -> Iterator[tuple[int, int]]:
    """Yield (start, end) line ranges, one per file section of a multi-file diff.

    `text`, when given, is what `lines` was split from: the candidate lines are then
    found with C-speed searches instead of testing every line.
    """
    starts: list[int] = []
    candidates = _candidate_starts(lines, text) if text is not None else None
    for i in candidates if candidates is not None else range(len(lines)):
        line = lines[i]
        if line.startswith("diff --git ") or (
            line.startswith("--- ")
            and i + 1 < len(lines)
            and lines[i + 1].startswith("+++ ")
            and (not starts or not _section_has_header(lines, starts[-1], i))
        ):
            starts.append(i)
    for k, start in enumerate(starts):
        yield start, starts[k + 1] if k + 1 < len(starts) else len(lines)


def _candidate_starts(lines: list[str], text: str) -> list[int] | None:
    """Indices of the lines starting `diff --git ` or `--- `, in order; None when line
    numbers can't be told by counting newlines (other line breaks in the text)."""
    if not text:
        return []
    # splitlines() also breaks at \r, \f, \x1c, \u2028...: the counts agree only when
    # no such break starts a line (one ending the text is harmless).
    if len(lines) != text.count("\n") + (0 if text.endswith("\n") else 1):
        return None
    offsets: list[int] = []
    for marker in ("diff --git ", "--- "):
        if text.startswith(marker):
            offsets.append(0)
        needle = "\n" + marker
        at = text.find(needle)
        while at >= 0:
            offsets.append(at + 1)
            at = text.find(needle, at + 1)
    offsets.sort()
    found: list[int] = []
    line = 0
    previous = 0
    for offset in offsets:
        line += text.count("\n", previous, offset)
        previous = offset
        found.append(line)
    return found


def _section_has_header(lines: list[str], start: int, i: int) -> bool:
    """True when `---` at `i` belongs to the `diff --git` section that begins at `start`."""
    if not lines[start].startswith("diff --git "):
        return False
    return all(not lines[j].startswith("@@") for j in range(start, i))


def parse_unified_diff(text: str) -> list[FilePatch]:
    """Parse a whole `git diff` / `git format-patch` / `diff -u` output."""
    return list(iter_unified_diff(text))


def iter_unified_diff(text: str) -> Iterator[FilePatch]:
    """The file sections of a diff, parsed one `diff --git` chunk at a time: the lines
    of the whole text never exist at once (for a 77 MB patch they were ~150 MB)."""
    # One tuple per diff line and none of them in a cycle: with the cyclic collector
    # running, its full passes over the growing heap took ~40% of a large parse.
    enabled = gc.isenabled()
    gc.disable()
    try:
        for chunk in _git_chunks(text):
            lines = chunk.splitlines()
            for start, end in _split_files(lines, chunk):
                yield _parse_section(lines, start, end)
    finally:
        if enabled:
            gc.enable()


def _git_chunks(text: str) -> Iterator[str]:
    """`text` cut before each line that starts `diff --git `. A section never spans
    two chunks: such a line always starts one (see `_split_files`)."""
    start = 0
    at = text.find("\ndiff --git ")
    while at >= 0:
        yield text[start:at + 1]
        start = at + 1
        at = text.find("\ndiff --git ", start)
    yield text[start:]


def _parse_section(lines: list[str], start: int, end: int) -> FilePatch:
    first = lines[start]
    old_path: str | None = None
    new_path: str | None = None
    patch = FilePatch(path="")
    git_match = _DIFF_GIT_RE.match(first) if first.startswith("diff --git ") else None
    if git_match:
        old_path, new_path = _unquote(git_match.group(1)), _unquote(git_match.group(2))
    i = start + 1 if first.startswith("diff --git ") else start
    while i < end and not lines[i].startswith("@@"):
        line = lines[i]
        if line.startswith("new file mode"):
            patch.status = "added"
        elif line.startswith("deleted file mode"):
            patch.status = "removed"
        elif line.startswith("rename from "):
            old_path, patch.status = _unquote(line[12:]), "renamed"
        elif line.startswith("rename to "):
            new_path = _unquote(line[10:])
        elif line.startswith("copy from "):
            old_path, patch.status = _unquote(line[10:]), "copied"
        elif line.startswith("copy to "):
            new_path = _unquote(line[8:])
        elif line.startswith(("Binary files ", "GIT binary patch")):
            patch.binary = True
        elif line.startswith("--- "):
            old = _strip_prefix(line[4:])
            old_path = old if old is not None else old_path
            if old is None:
                patch.status = "added"
        elif line.startswith("+++ "):
            new = _strip_prefix(line[4:])
            new_path = new if new is not None else new_path
            if new is None:
                patch.status = "removed"
        i += 1
    patch.path = new_path or old_path or ""
    if patch.status in ("renamed", "copied") or (old_path and new_path and old_path != new_path):
        patch.previous_path = old_path
        if patch.status == "modified":
            patch.status = "renamed"
    if not patch.path:
        patch.error = f"could not read a file name from {first[:80]!r}"
        return patch
    if patch.binary:
        return patch
    hunk_lines = lines[i:end]
    hunks, _, error = parse_hunks(hunk_lines)
    patch.hunks = hunks
    patch.error = error
    return patch
