"""Whose patch it is and what to recommend instead, from what the repository shows.

A patch of a parallel-state module's privates inside that module's own unit test is the
test's subject, not a shortcut. And the recommended fix must exist in the repository
under review: `get_parallel().override(...)` is SGLang's API, so it is only named when
the file, the repository view or the PR shows `get_parallel`; otherwise the advice names
a conftest fixture of the repository that applies an override, or no API at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath

from bot.core.repo_view import parent
from bot.core.snapshot import PullRequestSnapshot

OVERRIDE_HINT = ("Use the public override instead, e.g. "
                 "`with get_parallel().override(moe_ep_size=1):` (or apply it once in "
                 "`setUp()`), so the test states the parallel setting it depends on.")
GENERIC_HINT = ("Set the parallel configuration through the repository's public override or "
                "a shared fixture instead, so the test states the parallel setting it depends "
                "on.")
_FIXTURE_RE = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\(")
_MAX_CONFTESTS = 6
_MAX_BODY = 25


def tested_module(path: str) -> str:
    """The module a test file is named after: `test_parallel_state.py` -> `parallel_state`."""
    stem = PurePosixPath(path).stem
    if stem.startswith("test_"):
        return stem[5:]
    return stem[:-5] if stem.endswith("_test") else ""


def is_subject(path: str, module: str) -> bool:
    """The file is the unit test of the parallel-state module it patches."""
    tested = tested_module(path)
    return ("parallel_state" in module and bool(tested)
            and (tested == module or tested.startswith(module + "_")))


def advice(snapshot: PullRequestSnapshot, path: str, lines: Mapping[int, str]) -> str:
    if _defines_get_parallel(snapshot, lines):
        return OVERRIDE_HINT
    fixture = _override_fixture(snapshot, path)
    if fixture is not None:
        name, where = fixture
        return (f"Use the repository's `{name}` fixture ({where}) instead, so the test states "
                "the parallel setting it depends on.")
    return GENERIC_HINT


def _defines_get_parallel(snapshot: PullRequestSnapshot, lines: Mapping[int, str]) -> bool:
    if any("get_parallel(" in text or "import get_parallel" in text for text in lines.values()):
        return True
    for changed in snapshot.files:  # the PR may add it
        if changed.path.endswith(".py") and "def get_parallel(" in changed.added_text:
            return True
    view = snapshot.repo_view
    return view is not None and bool(view.find_symbol("get_parallel"))


def _conftests(path: str) -> list[str]:
    found: list[str] = []
    folder = parent(path)
    while len(found) < _MAX_CONFTESTS:
        found.append(f"{folder}/conftest.py" if folder else "conftest.py")
        if not folder:
            break
        folder = parent(folder)
    return found


def _override_fixture(snapshot: PullRequestSnapshot, path: str) -> tuple[str, str] | None:
    """The nearest conftest fixture that applies a parallel override: (name, conftest path)."""
    in_pr = {c.path: c.head_text for c in snapshot.files}
    view = snapshot.repo_view
    for conftest in _conftests(path):
        text = in_pr.get(conftest) if conftest in in_pr else (
            view.read(conftest) if view is not None else None)
        name = _fixture_applying_override(text.splitlines()) if text else None
        if name is not None:
            return name, conftest
    return None


def _fixture_applying_override(lines: list[str]) -> str | None:
    for i, text in enumerate(lines):
        if not text.lstrip().startswith("@pytest.fixture"):
            continue
        for j in range(i + 1, min(i + 5, len(lines))):
            match = _FIXTURE_RE.match(lines[j])
            if match is None:
                continue
            indent = len(match.group(1))
            body: list[str] = []
            for line in lines[j + 1:j + 1 + _MAX_BODY]:
                if line.strip() and len(line) - len(line.lstrip()) <= indent:
                    break
                body.append(line)
            if any(".override(" in line for line in body):
                return match.group(2)
            break
    return None
