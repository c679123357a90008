"""Arguments of a call the PR adds whole: configuration of that call, not a retune.

A perf test gains a one-request warm-up before its measured loop,
`run_benchmark(get_benchmark_args(num_prompts=1, max_concurrency=1, …))`: the values
belong to the new call. An existing call gaining an argument (`foo(a)` → `foo(a,
timeout=5)`, or a new line inside a call whose opening line is unchanged) is not a new
call and is still asked about.
"""

from __future__ import annotations

import re

from bot.core.snapshot import DiffLine, Hunk, LineKind

# A statement that opens a call: `run(`, `args = make_args(`, `return await client.post(`.
_CALL_RE = re.compile(
    r"^\s*(?:[\w.\[\]'\"]{1,120}\s*=\s*)?(?:return\s+)?(?:await\s+)?"
    r"([A-Za-z_][\w.]{0,120})\s*\(")
# A line after which the next one continues an expression (inside an existing call).
_CONTINUES = ("(", ",", "[", "{", "\\", "=", "+")
_MAX_CALL_LINES = 80


def _callee(text: str) -> str | None:
    match = _CALL_RE.match(text[:400])
    return match.group(1) if match else None


def _depth(text: str) -> int:
    code = text.split("#", 1)[0] if "#" in text else text
    return code.count("(") + code.count("[") - code.count(")") - code.count("]")


def _continued(lines: tuple[DiffLine, ...], i: int) -> bool:
    """Whether line i continues the statement above it (a keyword argument of an
    existing call, say): the nearest code line above it ends open."""
    for j in range(i - 1, -1, -1):
        kind, text, _, _ = lines[j]
        code = text.split("#", 1)[0].rstrip() if kind is not LineKind.REMOVED else ""
        if code:
            return code.endswith(_CONTINUES)
    return False


def new_call_lines(hunk: Hunk) -> frozenset[int]:
    """Head lines of calls whose every line is added: the opening line (a callee and
    its `(`) through the closing bracket, with no removed line in the hunk opening a
    call to the same callee."""
    removed_callees = {c for line in hunk.removed if (c := _callee(line.text)) is not None}
    lines = hunk.lines
    result: set[int] = set()
    i = 0
    while i < len(lines):
        kind, text, _, new_no = lines[i]
        callee = _callee(text) if kind is LineKind.ADDED else None
        if (callee is None or callee in removed_callees or new_no is None
                or _continued(lines, i)):
            i += 1
            continue
        depth, run, j = 0, [], i
        while j < len(lines) and j - i < _MAX_CALL_LINES:
            kind_j, text_j, _, no_j = lines[j]
            if kind_j is not LineKind.ADDED or no_j is None:
                break
            run.append(no_j)
            depth += _depth(text_j)
            j += 1
            if depth <= 0:
                break
        if depth <= 0 and run:
            result.update(run)
            i = j
        else:
            i += 1
    return frozenset(result)
