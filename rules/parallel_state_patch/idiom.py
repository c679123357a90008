"""A scoped fake of a group accessor that is the repository's unit-test idiom.

The incident behind this rule is a fake that outlives its test or hides what the code
reads: `parallel_state._MOE_EP = SimpleNamespace(...)` assigned in a test whose
`setUp()` already applied `get_parallel().override(...)`, for a gate that never read EP.
A unit test that fakes a group accessor with a patch that unittest.mock or pytest undoes
after the test (`@patch("pkg.mod.get_tp_group")`, `with patch(...)`,
`monkeypatch.setattr`, `mocker.patch`, `stack.enter_context(patch(...))`) leaks into
no other test. The rule's caller keeps it silent, where the repository shows no public
override to recommend, when either

- at least `MIN_FILES` base-revision test files around it (its own base text, its
  siblings, the files near it: `rules.analysis.siblings`) fake that accessor with a
  scoped patch: how this repository writes unit tests, not a shortcut of this PR; or
- it fakes the accessor in the namespace of the module the test imports, and that
  module (as the PR leaves it, or at the base) calls it by that name: the fake is the
  very group the code under test reads, so it hides no dependency.

A patch started by hand (`patch(...).start()`, `p = patch(...)`) or an assignment to
the accessor is not scoped: it neither stays silent nor counts as the idiom.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.lines import known_lines
from rules.analysis.siblings import nearby_files, sibling_files
from rules.parallel_state_patch.detect import PATCH_STR_RE, statements

MIN_FILES = 2  # other unit tests that fake the accessor so: the repository's idiom
_MAX_MODULES = 4  # modules under test read per test file
_SCOPED_START_RE = re.compile(r"^(?:@|(?:async\s+)?with\b)")
_SCOPED_CALL_RE = re.compile(r"\b(?:monkeypatch\.setattr|mocker\.patch(?:\.object)?|"
                             r"enter_context)\s*\(")


def scoped(statement: str) -> bool:
    """The patch is undone when its test (or `with` block) ends: a decorator, a `with`
    statement, a pytest fixture's patch, an ExitStack context; not `.start()`."""
    text = statement.lstrip()
    if ".start()" in text:
        return False  # started by hand: stopped (if ever) somewhere else
    return _SCOPED_START_RE.match(text) is not None or _SCOPED_CALL_RE.search(text) is not None


def _patch_of(name: str) -> re.Pattern[str]:
    quoted = re.escape(name)
    return re.compile(
        rf"\b(?:patch|setattr)\(\s*(?:target\s*=\s*)?[\"'][\w.]*\.{quoted}[\"']"
        rf"|\b(?:patch\.object|setattr)\(\s*[\w.]+\s*,\s*[\"']{quoted}[\"']")


def _fakes_scoped(text: str, found: re.Pattern[str], name: str) -> bool:
    if name not in text:
        return False
    lines = dict(enumerate(text.splitlines(), 1))
    return any(found.search(statement) and scoped(statement) for statement in
               (" ".join(lines[n].strip() for n in range(start, end + 1))
                for start, end in statements(lines)))


def _evidence(snapshot: PullRequestSnapshot, changed: ChangedFile) -> Iterable[tuple[str, str]]:
    if changed.base_text is not None:
        yield changed.path, changed.base_text
    yield from sibling_files(snapshot, changed.path) or ()
    yield from nearby_files(snapshot, changed.path, (".py",)) or ()


def repository_idiom(snapshot: PullRequestSnapshot, changed: ChangedFile,
                     accessors: Iterable[str]) -> frozenset[str]:
    """The accessors (of `accessors`) that at least MIN_FILES base-revision test files
    around `changed` fake with a scoped patch."""
    patterns = {name: _patch_of(name) for name in set(accessors)}
    counts = dict.fromkeys(patterns, 0)
    seen: set[str] = set()
    for path, text in _evidence(snapshot, changed):
        if path not in seen:
            seen.add(path)
            for name, pattern in patterns.items():
                counts[name] += _fakes_scoped(text, pattern, name)
    return frozenset(name for name, count in counts.items() if count >= MIN_FILES)


class ModulesUnderTest:
    """The modules a test file imports, read on need (PR head first, then the base)."""

    def __init__(self, snapshot: PullRequestSnapshot, lines: Mapping[int, str]) -> None:
        self._snapshot = snapshot
        self._imports = "\n".join(t for t in lines.values() if "import" in t)
        self._texts: dict[str, str | None] = {}

    def _imported(self, module: str) -> bool:
        parent, _, leaf = module.rpartition(".")
        pattern = rf"^\s*(?:from\s+{re.escape(module)}\s+import\b|import\s+{re.escape(module)}\b"
        if parent:
            pattern += rf"|from\s+{re.escape(parent)}\s+import\s+[\w\s,(]*\b{re.escape(leaf)}\b"
        return re.search(pattern + ")", self._imports, re.M) is not None

    def _text(self, module: str) -> str | None:
        if module not in self._texts:
            if len(self._texts) >= _MAX_MODULES:
                return None
            stem = module.replace(".", "/")
            paths = (f"{stem}.py", f"{stem}/__init__.py")
            in_pr = {c.path: c for c in self._snapshot.files if c.path in paths}
            view = self._snapshot.repo_view
            text = None
            for path in paths:
                own = in_pr.get(path)
                if own is not None and own.status != "removed":  # the head: text or patch
                    text = own.head_text or "\n".join(known_lines(own).values())
                    if own.head_text is None and own.status != "added" and view is not None:
                        text += "\n" + (view.read(own.previous_path or path) or "")
                elif own is None and view is not None:
                    text = view.read(path)  # the base, which the PR leaves as it is
                if text is not None:
                    break
            self._texts[module] = text
        return self._texts[module]

    def reads(self, statement: str, name: str) -> bool:
        """The statement patches `name` in a module the test imports that calls `name(`."""
        target = PATCH_STR_RE.search(statement)
        if target is None:
            return False
        module, _, patched = target.group(2).rpartition(".")
        if patched != name or not module or not self._imported(module):
            return False
        text = self._text(module)
        return text is not None and re.search(
            rf"(?<![\w.])(?<!def ){re.escape(name)}\s*\(", text) is not None
