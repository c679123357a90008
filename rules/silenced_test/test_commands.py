"""Test commands in CI shell: which tests a workflow or script runs, before and after.

A `# pytest tests/x/test_y.py` line only silences a test that the base revision ran,
by that very line, a directory or file it was part of (`pytest tests/x/`, minus its
`--ignore=`s), and that the head no longer runs. So commenting out a command for a
test that never ran, or one a remaining glob still covers, silences nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache

from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile
from rules.analysis.lines import sides
from rules.silenced_test.expansion import MakeTargets, expanded, joined

_MAX_COMMANDS = 2_000  # commands parsed per file side
_PREFIX_RE = re.compile(r"^(?:-\s+)?(?:(?:run|command|commands|script)\s*:\s*[|>]?[-+]?\s*)?")
_ENV_RE = re.compile(r"^(?:(?:export\s+)?[A-Za-z_]\w*=(?:\"[^\"]*\"|'[^']*'|\S*)\s+)+")
_WRAPPER_RE = re.compile(
    r"^(?:(?:timeout\s+\S+|time|sudo|env|uv\s+run|coverage\s+run|(?:python\d?(?:\.\d+)?|"
    r"python)\s+(?:-[A-Za-z]+\s+)*-m)\s+)+"
)
_RUNNER_RE = re.compile(
    r"^(?:pytest|py\.test|torchrun|accelerate\s+launch|deepspeed|mpirun|go\s+test|ctest|"
    r"make\s+\S*test\S*|(?:bash|sh)\s+\S*test\S*|"
    # `python -u tests/…/generation_mm.py`: interpreter flags before the script.
    r"python\d?(?:\.\d+)?\s+(?:-[A-Za-z]{1,3}\s+){0,3}\S*(?:test|suite)\S*|"
    r"\.?/?\S*test\S*\.sh)\b"
)
_TOKEN_RE = re.compile(r"[^\s\"'`;|&()]+")
_IGNORE_RE = re.compile(r"--(?:ignore(?:-glob)?|deselect)(?:=|\s+)[\"']?([^\s\"';]+)")


@lru_cache(maxsize=4096)  # the same line recurs (per step, per file, per side)
def command(text: str) -> str | None:
    """The test command on a shell or YAML line (`- run: pytest …`), normalized, or None."""
    code = _PREFIX_RE.sub("", text.strip(), count=1)
    code = _WRAPPER_RE.sub("", _ENV_RE.sub("", code, count=1), count=1)
    if not _RUNNER_RE.match(code) or "test" not in code.lower():
        return None
    return " ".join(code.split())


def targets(cmd: str) -> list[str]:
    """The test paths a command names (`tests/e2e/`, `test_x.py::test_y`)."""
    ignored = set(_IGNORE_RE.findall(cmd))
    out = []
    for token in _TOKEN_RE.findall(_IGNORE_RE.sub(" ", cmd)):
        if token.startswith("-") or token in ignored or "$" in token:
            continue
        if "test" in token.lower() and ("/" in token or "::" in token
                                        or token.endswith((".py", ".sh"))):
            out.append(token.removeprefix("./"))
    return out


def _scopes(target: str) -> list[str]:
    """Every path that `_within(target, path)` holds for: the target, the part before
    `::`, and each parent directory (`a/b/c.py` → `a/b/c.py`, `a/b`, `a`)."""
    pieces = target.split("::")
    found = ["::".join(pieces[:k]).rstrip("/") for k in range(len(pieces), 0, -1)]
    head = pieces[0]
    parts = head.rstrip("/").split("/")
    found += ["/".join(parts[:k]) for k in range(len(parts) - 1, 0, -1)]
    return found


def _within(target: str, scope: str) -> bool:
    scope = scope.rstrip("/")
    return target == scope or target.startswith((scope + "/", scope + "::"))


_MAKE_RE = re.compile(r"^make\s+(?P<args>[^|&;]*)")


def _make_targets(cmd: str) -> list[str]:
    """The targets of a `make …` command (flags and `VAR=value` left out)."""
    match = _MAKE_RE.match(cmd)
    if match is None:
        return []
    return [a for a in match.group("args").split() if not a.startswith("-") and "=" not in a
            and "$" not in a][:8]


_CHAIN_RE = re.compile(r"\s*(?:&&|\|\||;)\s*")


def _segments(lines: Iterable[str]) -> Iterator[str]:
    """Each line, then each command of a chain (`make a || status=1`, `cd x && pytest y`)."""
    for line in lines:
        yield line
        if "&&" in line or "||" in line or ";" in line:
            parts = _CHAIN_RE.split(line)
            if len(parts) > 1:
                yield from (p for p in parts[:16] if p)


@dataclass(frozen=True)
class Runs:
    """The test commands one side of a file runs."""

    commands: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]  # text, paths, ignores

    @staticmethod
    def of(lines: Iterable[str], expand: bool = False) -> Runs:
        """`expand`: one file's lines, whose matrix values and loops are expanded."""
        found = []
        for line in _segments(joined(lines) if not expand else expanded(joined(lines))):
            if line.lstrip().startswith("#"):
                continue
            cmd = command(line)
            if cmd is not None:
                found.append((cmd, tuple(targets(cmd)), tuple(_IGNORE_RE.findall(cmd))))
                if len(found) >= _MAX_COMMANDS:
                    break
        return Runs(tuple(found))

    @cached_property
    def _index(self) -> tuple[frozenset[str], dict[str, list[tuple[str, ...]]]]:
        """Command texts, and per named path the ignore lists of the commands naming it
        (so `runs` looks up a target's ancestors instead of scanning every command)."""
        by_path: dict[str, list[tuple[str, ...]]] = {}
        for _, paths, ignores in self.commands:
            for path in paths:
                by_path.setdefault(path.rstrip("/"), []).append(ignores)
        return frozenset(text for text, _, _ in self.commands), by_path

    def makes(self, cmd: str, make: MakeTargets | None) -> bool:
        """Whether `cmd` is `make X` and one of these commands makes a target whose
        recipe runs X."""
        wanted = _make_targets(cmd)
        if make is None or len(wanted) != 1:
            return False
        return any(make.runs(name, wanted[0]) for text, _, _ in self.commands
                   for name in _make_targets(text))

    def count(self, target: str) -> int:
        """How many of these commands name `target` itself."""
        return len(self._index[1].get(target.rstrip("/"), ()))

    def runs(self, cmd: str, target: str | None) -> bool:
        """Whether these commands run `target` (or, without a path, this very command)."""
        texts, by_path = self._index
        if target is None:
            return cmd in texts
        for scope in _scopes(target):
            for ignores in by_path.get(scope, ()):
                if not any(_within(target, i) for i in ignores):
                    return True
        return False


def side_runs(changed: ChangedFile, which: str) -> Runs:
    """The test commands of the base or head side: the whole text when known, else the
    patch's lines of that side (context plus removed or added lines)."""
    text = changed.base_text if which == "base" else changed.head_text
    if text is not None:
        return Runs.of(text.splitlines(), expand=True)
    index = 0 if which == "base" else 1
    return Runs.of((t for h in changed.hunks for _, t, _ in sides(h)[index]), expand=True)


def silenced_targets(cmd: str, base: Runs, head: Runs,
                     make: MakeTargets | None = None) -> list[str]:
    """The tests of `cmd` that the base ran and the head no longer runs (a `make X` that
    a remaining `make Y` runs through its recipe still runs)."""
    named = targets(cmd)
    if not named:
        gone = base.runs(cmd, None) and not head.runs(cmd, None)
        return [cmd] if gone and not head.makes(cmd, make) else []
    return [t for t in named if base.runs(cmd, t) and not head.runs(cmd, t)]


def dropped_invocation(cmd: str, base: Runs, head: Runs) -> list[str]:
    """The script of a commented-out `cmd` when the head still invokes it by name, but
    fewer times than the base did and never as `cmd`: one of its invocations (a model
    card, a config) is the one commented out, even where the PR also edited its
    arguments (`27b` → `4b`). Not a script a directory run now covers whole."""
    named = targets(cmd)
    if not named or head.runs(cmd, None):
        return []
    script = named[0]
    return [script] if 0 < head.count(script) < base.count(script) else []


def commented_back(cmd: str, added: Iterable[str]) -> bool:
    """Whether one of the `added` lines comments out an invocation of `cmd`'s script
    (the commented-out detector reports that one, with its edited arguments)."""
    named = targets(cmd)
    if not named:
        return False
    for text in added:
        code = text.strip()
        if code.startswith("#") and named[0] in code:
            back = command(code.lstrip("#").strip())
            if back is not None and named[0] in targets(back):
                return True
    return False


_TESTPATHS_RE = re.compile(r"^testpaths\s*=\s*(?P<v>[^\n]*(?:\n[ \t]+[^\n]*)*)", re.M)


def config_testpaths(repo: RepoView | None) -> tuple[str, ...] | None:
    """The `testpaths` a bare `pytest` collects, from the root pytest config (the first of
    pytest.ini, pyproject.toml, setup.cfg, tox.ini that sets it), or None when unknown."""
    for name in ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini") if repo else ():
        match = _TESTPATHS_RE.search((repo.read(name) if repo else None) or "")
        if match is not None:
            words = re.findall(r"[^\s\"',\[\]]+", match.group("v").split(";")[0])
            return tuple(w.removeprefix("./").rstrip("/") for w in words) or None
    return None


def newly_covered(line: str, value: str, base: Runs, testpaths: tuple[str, ...] | None) -> bool:
    """Whether `--ignore=value` on `line` trims a selection the PR broadened: the line's
    command runs a directory holding `value` and the base ran neither (`pytest tests/a.py`
    became `pytest tests/ --ignore=tests/b.py`), so b.py, which never ran, loses nothing.
    A glob, or a base `pytest` with no path that may collect `value` (no `testpaths`
    known to leave it out), says no."""
    cmd = command(line)
    if cmd is None or any(c in value for c in "*?[") or not base.commands:
        return False
    bare = any(not paths and text.startswith(("pytest", "py.test"))
               for text, paths, _ in base.commands)
    if bare and (testpaths is None or any(_within(value, t) for t in testpaths)):
        return False
    scopes = [t for t in targets(cmd) if _within(value, t) and t.rstrip("/") != value]
    return bool(scopes) and not base.runs(cmd, value) and \
        not any(base.runs(cmd, s) for s in scopes)
