"""Unified diff parsing: `git diff`, `git format-patch` and GitHub's per-file `patch`.

The parser never raises on bad input: a file whose patch cannot be read keeps the
hunks read so far and carries a `patch_error`, and the rest of the diff still parses.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, count, repeat
from operator import itemgetter

from bot.core.snapshot import DiffLine, Hunk, LineKind

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
    tags = "".join(map(_FIRST, lines)) if "" not in lines else None
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
        end = _body_end(tags, i, n, old_count, new_count) if tags is not None else -1
        if end >= 0:
            body = _body_fast(lines, tags or "", i, end, old_start, new_start)
            i = end
            while i < n and lines[i].startswith("\\"):
                i += 1
            error = None
        else:
            body, i, error = _body_loop(lines, i, old_start, old_count, new_start, new_count)
        hunk = Hunk(old_start, old_count, new_start, new_count, match.group(5), body)
        hunks.append(hunk)
        if error is not None:
            return hunks, i, error
    return hunks, i, None


_FIRST = itemgetter(0)
_REST = itemgetter(slice(1, None))
_KIND_OF = {"+": LineKind.ADDED, "-": LineKind.REMOVED, " ": LineKind.CONTEXT}
_NO_NUMBER = repeat(None)
_RUN_RE = re.compile(r"\++|-+| +")
_new_line = tuple.__new__  # a DiffLine from a 4-tuple, without NamedTuple's Python __new__


def _body_end(tags: str, i: int, n: int, old_count: int, new_count: int) -> int:
    """End of a well-formed hunk body starting at line i (only `+`, `-` and ` ` lines
    until both counts are met exactly), or -1 when the line-by-line loop must decide.

    Each line meets at most one more of each count, so the end is at least the larger
    count still missing away: jump there, count, repeat.
    """
    plus = minus = space = 0
    end = i
    while True:
        need = max(new_count - plus - space, old_count - minus - space)
        if need <= 0:
            break
        if end + need > n:
            return -1
        plus += tags.count("+", end, end + need)
        minus += tags.count("-", end, end + need)
        space += tags.count(" ", end, end + need)
        end += need
    exact = plus + space == new_count and minus + space == old_count
    return end if exact and plus + minus + space == end - i else -1


def _body_fast(lines: list[str], tags: str, i: int, end: int, old_start: int,
               new_start: int) -> tuple[DiffLine, ...]:
    """The DiffLines of a body `_body_end` vouched for, built without a Python loop
    per line: per run of same-kind lines when runs are long (the usual case)."""
    kinds = tags[i:end]
    runs = _RUN_RE.findall(kinds)
    if len(runs) * 8 > len(kinds):
        old_no, new_no = count(old_start), count(new_start)
        olds: Iterator[int | None] = map(
            next, map({"+": _NO_NUMBER, "-": old_no, " ": old_no}.__getitem__, kinds))
        news: Iterator[int | None] = map(
            next, map({"+": new_no, "-": _NO_NUMBER, " ": new_no}.__getitem__, kinds))
        kind_of: Iterator[LineKind] = map(_KIND_OF.__getitem__, kinds)
    else:
        kind_runs: list[Iterable[LineKind]] = []
        old_runs: list[Iterable[int | None]] = []
        new_runs: list[Iterable[int | None]] = []
        old, new = old_start, new_start
        for run in runs:
            size, tag = len(run), run[0]
            kind_runs.append(repeat(_KIND_OF[tag], size))
            if tag == "+":
                old_runs.append(repeat(None, size))
                new_runs.append(range(new, new + size))
                new += size
            elif tag == "-":
                old_runs.append(range(old, old + size))
                new_runs.append(repeat(None, size))
                old += size
            else:
                old_runs.append(range(old, old + size))
                new_runs.append(range(new, new + size))
                old += size
                new += size
        olds = chain.from_iterable(old_runs)
        news = chain.from_iterable(new_runs)
        kind_of = chain.from_iterable(kind_runs)
    rows = zip(kind_of, map(_REST, lines[i:end]), olds, news, strict=True)
    return tuple(map(_new_line, repeat(DiffLine), rows))


def _body_loop(
    lines: list[str], i: int, old_start: int, old_count: int, new_start: int, new_count: int
) -> tuple[tuple[DiffLine, ...], int, str | None]:
    """A hunk body line by line: the general case, with `\\` lines and malformed input."""
    n = len(lines)
    old_no, new_no = old_start, new_start
    old_left, new_left = old_count, new_count
    body: list[DiffLine] = []
    append = body.append
    added, removed, context = LineKind.ADDED, LineKind.REMOVED, LineKind.CONTEXT
    while i < n and (old_left > 0 or new_left > 0):
        line = lines[i]
        tag = line[:1]
        if tag == "+" and new_left > 0:
            append(DiffLine(added, line[1:], None, new_no))
            new_no += 1
            new_left -= 1
        elif tag == "-" and old_left > 0:
            append(DiffLine(removed, line[1:], old_no, None))
            old_no += 1
            old_left -= 1
        elif (tag == " " or line == "") and old_left > 0 and new_left > 0:
            # An empty line is a context line whose leading space was trimmed
            # by an editor or a copy from a web page.
            append(DiffLine(context, line[1:], old_no, new_no))
            old_no += 1
            new_no += 1
            old_left -= 1
            new_left -= 1
        elif tag == "\\":
            pass  # "\ No newline at end of file"
        else:
            return tuple(body), i, (
                f"hunk at line {new_start} ends early: expected -{old_count} +{new_count} "
                f"lines, diff line {line[:60]!r} does not fit"
            )
        i += 1
    while i < n and lines[i].startswith("\\"):
        i += 1
    if old_left > 0 or new_left > 0:
        return tuple(body), i, f"hunk at line {new_start} is truncated"
    return tuple(body), i, None


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
    # One tuple per diff line and none of them in a cycle: with the cyclic collector
    # running, its full passes over the growing heap took ~40% of a large parse.
    enabled = gc.isenabled()
    gc.disable()
    try:
        lines = text.splitlines()
        return [_parse_section(lines, start, end) for start, end in _split_files(lines, text)]
    finally:
        if enabled:
            gc.enable()


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
