"""The test a removed line names, for silencing by deletion: a YAML list item
(`- script: L2_x`), a Python suite-list entry (`TestFile("test_x.py", 60),`), whether
the head still defines a removed test, and which test functions the PR deletes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

from bot.core.repo_view import RepoView, defines
from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.lines import indent_width, sides
from rules.silenced_test.line_structure import YAML_KEY_RE
from rules.silenced_test.skip_names import skip_name

# `- script: L2_x`, `- test: x`, `- tests/x/test_y.py`, `- run_x_test` (one word).
YAML_ITEM_RE = re.compile(
    r"^-\s+(?:(?P<key>script|test|test_name|test-name|suite|test_suite|test-suite|test_file)"
    r"\s*:\s*)?[\"']?(?P<value>[\w./-]{3,120})[\"']?\s*$")
# An entry line of a Python suite list: a call or a string naming a test file or id.
PY_ENTRY_RE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\(\s*)?[\"']([\w./:-]*test[\w./:\[\]-]*)[\"']\s*[,)]", re.I)
# A reusable workflow's test input (`with:` → `tests: tests/e2e/nightly/test_x.py`), the
# paths a job runs: re-pointed to another test, the old one runs nowhere.
_TEST_INPUT_RE = re.compile(
    r"^(?P<key>tests?|test[-_](?:files?|paths?|targets?|modules?))\s*:\s*[\"']?"
    r"(?P<value>[^\"'#|>]+?)[\"']?\s*(?:#.*)?$")
_PATH_RE = re.compile(r"[\w./-]*test[\w./-]*(?:\.py|/)(?:::[\w\[\]-]+)?")
# The list holding it: `name = [`, `"suite-name": [`, `name=[`.
_PY_HOLDER_RE = re.compile(r"^\s*[\"']?([\w.-]+)[\"']?\s*(?::[^=]*)?[:=]\s*[\[({]")


def yaml_test_item(hunk: Hunk, old_no: int | None, code: str) -> str | None:
    """The test a removed YAML list item names (`- script: L2_Launch_llama`, `- test_x`,
    `- run_gsm8k_test`), unless its list is a skip list (removing from it re-enables)."""
    match = YAML_ITEM_RE.match(code) if code.startswith("-") else None
    if match is None or ("test" not in code.lower() and not match.group("key")):
        return None
    old_side = sides(hunk)[0]
    at = next((i for i, (no, _, _) in enumerate(old_side) if no == old_no), None)
    if at is None:
        return None
    width = indent_width(old_side[at][1])
    for _, text, _ in reversed(old_side[:at]):
        if text.strip() and indent_width(text) < width:
            key = YAML_KEY_RE.match(text)
            if key is None or skip_name(key.group("key")) or \
                    key.group("key").lower() in ("exclude", "with", "env", "environment"):
                return None
            break
    return match.group("value")


def test_module(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith(("test_", "conftest")) or name.endswith("_test.py")


def python_test_entry(changed: ChangedFile, hunk: Hunk, text: str) -> str | None:
    """The test a removed entry of a Python suite list names (`TestFile("test_x.py",
    60),` in run_suite.py, `"tests/unit/test_y.py",`), outside test modules (where
    strings are parametrizations) and skip lists."""
    if test_module(changed.path):
        return None
    match = PY_ENTRY_RE.match(text)
    if match is None:
        return None
    old_side = sides(hunk)[0]
    width = indent_width(text)
    at = next((i for i, (_, t, changed_) in enumerate(old_side) if changed_ and t == text),
              len(old_side))
    above = [t for _, t, _ in old_side[:at] if t.strip() and indent_width(t) < width]
    holder = _PY_HOLDER_RE.match(above[-1]) if above else None
    if holder is None or skip_name(holder.group(1)):
        return None
    return match.group(1)


def defined_in_head(changed: ChangedFile, name: str, shell: bool = False) -> bool:
    """Whether the head still defines the test (unknown without the head text: a shell
    test function is then taken as kept, a Python test as gone)."""
    head = changed.head_text
    if head is None:
        return shell
    pattern = (rf"^\s*(?:function\s+)?{re.escape(name)}\s*(?:\(\s*\)|\{{)" if shell
               else rf"def\s+{re.escape(name)}\b")
    return re.search(pattern, head, re.M) is not None


_DEF_NAME_RE = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)


def deleted_definitions(files: Iterable[ChangedFile]) -> dict[str, frozenset[str]]:
    """Per Python test module the PR edits, the test functions and classes it deletes:
    a removed `def`/`class` line that the head no longer defines (by its text when
    known, else by the file's added lines, where a moved definition would reappear)."""
    found: dict[str, frozenset[str]] = {}
    for f in files:
        if f.status == "removed" or not f.path.endswith(".py") or not test_module(f.path):
            continue
        names = {m.group(1) for ln in f.removed_lines if (m := _DEF_NAME_RE.match(ln.text))}
        if not names:
            continue
        head = f.head_text if f.head_text is not None else \
            "\n".join(ln.text for ln in f.added_lines)
        gone = names - {m.group(1) for m in _DEF_NAME_RE.finditer(head)}
        if gone:
            found[f.path] = frozenset(gone)
    return found


def test_input_paths(code: str) -> list[str]:
    """The test paths a `tests:` input line names (`tests: tests/e2e/test_x.py`)."""
    match = _TEST_INPUT_RE.match(code)
    if match is None:
        return []
    return [p.split("::", 1)[0] for p in _PATH_RE.findall(match.group("value"))][:8]


_FROM_IMPORT_RE = re.compile(r"^from\s+([\w.]+)\s+import\s+(\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)", re.M)
_CALL_RE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")
_BODY = 200  # removed lines of one deleted test read for the names it calls


def _imported_names(text: str | None) -> dict[str, str]:
    """Names a Python module imports with `from pkg.mod import a, b` → `pkg/mod`."""
    found: dict[str, str] = {}
    for match in _FROM_IMPORT_RE.finditer(text or ""):
        for part in re.split(r"[\s,()\\]+", match.group(2).split("#", 1)[0]):
            name = part.strip()
            if name and name not in ("as", "*"):
                found[name] = match.group(1).replace(".", "/")
    return found


def _deleted_test_calls(hunk: Hunk, old_no: int | None) -> set[str]:
    """The names the deleted test at base line `old_no` calls: its removed body, the
    lines after the `def` indented deeper (or blank), up to the first that is not."""
    lines = [ln for ln in hunk.removed if ln.old_no is not None and old_no is not None
             and old_no <= ln.old_no < old_no + _BODY]
    if not lines:
        return set()
    width, calls = indent_width(lines[0].text), set()
    for prev, ln in pairwise(lines):
        if ln.old_no != (prev.old_no or 0) + 1 or \
                (ln.text.strip() and indent_width(ln.text) <= width):
            break
        calls.update(_CALL_RE.findall(ln.text))
    return calls


def _defined_after(module: str, name: str, files: tuple[ChangedFile, ...],
                   repo: RepoView | None) -> bool | None:
    """Whether module `pkg/mod` defines `name` once the PR is applied: its head text, or
    its base text (the repository view) with the PR's added and removed `def`s applied;
    None when neither is known."""
    paths = (module + ".py", module + "/__init__.py")
    changed = next((f for f in files if f.path in paths), None)
    if changed is not None and (changed.status == "removed" or changed.head_text is not None):
        return changed.status != "removed" and defines(changed.head_text or "", name)
    if changed is not None and any(defines(ln.text, name) for ln in changed.added_lines):
        return True
    base = next((t for p in paths if (t := repo.read(p)) is not None), None) if repo else None
    if base is None:
        return None
    return defines(base, name) and not (changed is not None and any(
        defines(ln.text, name) for ln in changed.removed_lines))


def subject_gone(changed: ChangedFile, hunk: Hunk, old_no: int | None,
                 files: tuple[ChangedFile, ...], repo: RepoView | None) -> bool:
    """Whether a deleted test calls a name its module no longer imports and that the
    imported module no longer defines (or never did): its subject went with the code,
    so the test goes too (a stale test of a removed function), no silencing."""
    if changed.head_text is None:
        return False
    dropped = _imported_names(changed.base_text).items() - \
        _imported_names(changed.head_text).items()
    calls = _deleted_test_calls(hunk, old_no) if dropped else set()
    return any(name in calls and _defined_after(module, name, files, repo) is False
               for name, module in sorted(dropped))
