"""The commands a CI step really runs once its matrix and loops are expanded.

A workflow that folds per-suite steps into one matrix job runs
`for t in ${{ matrix.targets }}; do make $t; done`: the literal `make test_deepspeed`
is gone from the file, but every matrix entry still runs it. So before a removed test
command counts as removed, the other side's lines are expanded:

- `${{ matrix.KEY }}` (GitHub Actions) and `{{matrix.KEY}}` / `{{matrix}}` (Buildkite)
  become one line per value of KEY in the enclosing job's `matrix:` (plain lists and
  `include:` entries alike);
- a shell loop over literal words (`for t in a b c; do … $t …; done`, Makefile `$$t`
  too) becomes its body once per word.

Make recipes are read the same way (`MakeTargets`): `make test` still runs
`test_core` when the `test:` recipe calls `$(MAKE) test_core` or loops over it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property

from rules.analysis.lines import indent_width

_MAX_VALUES = 64  # values of one matrix key, words of one loop
_MAX_LINES = 2_000  # expanded lines per file side
_USE_RE = re.compile(r"\$?\{\{\s*matrix(?:\.([\w-]+))?\s*\}\}")
_MATRIX_KEY_RE = re.compile(r"^\s*(?:-\s+)?matrix\s*:\s*(?P<val>.*)$")
_KEY_RE = re.compile(r"^\s*(?P<dash>-\s+)?(?P<key>[\w-]+)\s*:\s*(?P<val>.*)$")
_ITEM_RE = re.compile(r"^\s*-\s+(?P<val>.*)$")
_FOR_RE = re.compile(
    r"\bfor\s+(?P<var>[A-Za-z_]\w*)\s+in\s+(?P<words>[^;\n]*?)\s*(?:;|$)\s*(?:do\b(?P<body>.*))?$")
_DONE_RE = re.compile(r"(?:^|[;\s])done\b")


def _scalar(value: str) -> list[str]:
    """The values a matrix entry gives: a scalar or a flow list, quotes off."""
    value = value.split(" #", 1)[0].strip()
    if not value or "${{" in value:
        return []  # a nested mapping, or computed (`fromJSON(...)`): not expandable here
    if value.startswith("[") and value.endswith("]"):
        return [v.strip().strip("\"'") for v in value[1:-1].split(",") if v.strip()]
    return [value.strip("\"'")]


def _block_end(lines: list[str], at: int) -> int:
    """The index after the last line of the YAML block opened by line `at`."""
    width = indent_width(lines[at])
    end = at + 1
    while end < len(lines) and (not lines[end].strip() or indent_width(lines[end]) > width):
        end += 1
    return end


def _matrix_values(lines: list[str], start: int, end: int) -> dict[str, list[str]]:
    """KEY → values in the `matrix:` block at lines[start:end] (`include:` entries too);
    "" → the items of a bare Buildkite `matrix: [a, b]` / `matrix:\\n - a`."""
    values: dict[str, list[str]] = {}
    head = _MATRIX_KEY_RE.match(lines[start])
    if head and head.group("val"):
        values[""] = _scalar(head.group("val"))
    for i in range(start + 1, end):
        text = lines[i]
        key = _KEY_RE.match(text)
        if key is None:
            item = _ITEM_RE.match(text)
            if item is not None and indent_width(text) > indent_width(lines[start]):
                values.setdefault("", []).extend(_scalar(item.group("val")))
            continue
        found = _scalar(key.group("val"))
        if not key.group("val").strip():  # `KEY:` and a block list below it
            j = i + 1
            while j < end and (item := _ITEM_RE.match(lines[j])) and \
                    _KEY_RE.match(lines[j]) is None:
                found += _scalar(item.group("val"))
                j += 1
        bucket = values.setdefault(key.group("key"), [])
        bucket.extend(v for v in found if v not in bucket)
    return {k: v[:_MAX_VALUES] for k, v in values.items()}


class _Matrices:
    """Per line of a file, the matrix of the job it sits in (found on need)."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        self._cache: dict[int, dict[str, list[str]]] = {}

    @cached_property
    def _starts(self) -> list[int]:
        return [i for i, t in enumerate(self._lines) if _MATRIX_KEY_RE.match(t)]

    def of(self, at: int) -> dict[str, list[str]]:
        """The matrix of the nearest enclosing block (a job, a step) that declares one."""
        lines, width = self._lines, indent_width(self._lines[at])
        for i in range(at - 1, -1, -1):
            text = lines[i]
            if not text.strip() or indent_width(text) >= width:
                continue
            width = indent_width(text)
            end = _block_end(lines, i)
            inside = [s for s in self._starts if i < s < end]
            if inside:
                if inside[0] not in self._cache:
                    self._cache[inside[0]] = _matrix_values(
                        lines, inside[0], _block_end(lines, inside[0]))
                return self._cache[inside[0]]
            if width == 0:
                break
        return {}


def _literal(value: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: value


def _substituted(text: str, matrix: dict[str, list[str]]) -> list[str]:
    out = [text]
    for key in dict.fromkeys(m.group(1) or "" for m in _USE_RE.finditer(text)):
        values = matrix.get(key)
        if not values:
            continue
        pattern = re.compile(r"\$?\{\{\s*matrix" + (r"\." + re.escape(key) if key else "")
                             + r"\s*\}\}")
        out = [pattern.sub(_literal(v), line) for line in out for v in values]
        out = out[:_MAX_VALUES]
    return out


def _loop_words(words: str) -> list[str] | None:
    """The literal words a `for` loops over, or None when computed (`$(ls …)`, `"$@"`)."""
    if "$" in words or "`" in words:
        return None
    return [w.strip("\"'") for w in words.split()][:_MAX_VALUES]


def _with_var(text: str, var: str, word: str) -> str:
    return re.sub(r"\$\$?(?:\{" + var + r"\}|" + var + r"\b)", lambda _m: word, text)


def expand_loops(lines: Iterable[str]) -> Iterator[str]:
    """Every line, and each literal shell loop's body once per word it loops over."""
    pending: list[tuple[str, list[str]]] = []  # open loops: variable, words
    for line in lines:
        yield line
        match = _FOR_RE.search(line)
        if match is not None:
            words = _loop_words(match.group("words"))
            body = match.group("body")
            if words is not None and body is not None and _DONE_RE.search(body):
                inline = _DONE_RE.split(body, maxsplit=1)[0]
                for part in inline.split(";"):
                    yield from (_with_var(part, match.group("var"), w) for w in words)
                continue
            pending.append((match.group("var"), words or []))
            if body:
                line = body
            else:
                continue
        if pending and _DONE_RE.search(line) and not line.strip().startswith("for "):
            pending.pop()
            continue
        for var, words in pending:
            if re.search(r"\$\$?\{?" + var + r"\b", line):
                for part in line.split(";"):
                    yield from (_with_var(part, var, w) for w in words)


def joined(lines: Iterable[str]) -> Iterator[str]:
    """Lines with shell `\\` continuations joined."""
    pending = ""
    for line in lines:
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        yield pending + stripped
        pending = ""
    if pending:
        yield pending


def expanded(lines: Iterable[str]) -> list[str]:
    """The lines with matrix values and literal loops expanded (bounded)."""
    source = list(lines)
    matrices = _Matrices(source) if any(_USE_RE.search(t) for t in source) else None
    flat: list[str] = []
    for i, text in enumerate(source):
        if matrices is not None and _USE_RE.search(text):
            flat.extend(_substituted(text, matrices.of(i)))
        else:
            flat.append(text)
    return list(expand_loops(flat))[:_MAX_LINES + len(source)]


_TARGET_RE = re.compile(r"^(?P<names>[A-Za-z0-9_.\- ]+?)\s*:(?!=)(?P<deps>[^=\n]*)$")
_SUBMAKE_RE = re.compile(r"(?:\$[({]MAKE[)}]|\bmake)\s+(?:-\S+\s+)*(?P<target>[A-Za-z0-9_.-]+)")


class MakeTargets:
    """Which targets a Makefile target runs (its prerequisites and sub-`make` calls)."""

    def __init__(self, text: str) -> None:
        self._calls: dict[str, set[str]] = {}
        current: list[str] = []
        recipe: list[str] = []
        for raw in [*text.splitlines()[:5_000], ""]:
            if raw.startswith("\t") and current:
                recipe.append(raw.strip().lstrip("@"))
                continue
            if current:
                self._add(current, recipe)
            current, recipe = [], []
            target = _TARGET_RE.match(raw)
            if target is not None and not raw.startswith((".", "#")):
                current = target.group("names").split()
                for name in current:
                    self._calls.setdefault(name, set()).update(target.group("deps").split())

    def _add(self, names: list[str], recipe: list[str]) -> None:
        for line in expand_loops(joined(recipe)):
            for match in _SUBMAKE_RE.finditer(line):
                for name in names:
                    self._calls.setdefault(name, set()).add(match.group("target"))

    def runs(self, target: str, wanted: str) -> bool:
        """Whether `make target` runs `wanted` (itself, or through its recipe)."""
        seen: set[str] = set()
        todo = [target]
        while todo:
            name = todo.pop()
            if name == wanted:
                return True
            if name in seen or len(seen) > 500:
                continue
            seen.add(name)
            todo.extend(self._calls.get(name, ()))
        return False
