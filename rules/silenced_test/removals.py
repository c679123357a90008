"""Silencing by deletion: a test invocation, a test-list entry or a test function that a
change removes instead of fixing.

- a test command removed from a CI script or workflow (`pytest tests/x/test_y.py`) whose
  tests the base ran and no command of the PR's head still runs;
- a call of one of a CI script's test functions removed (the function stays);
- an entry removed from a CI list file (`tests-nightly.txt`, `models-small.txt`);
- a `def test_…` deleted from a test file in a PR that says it fixes tests (medium:
  the test may have been obsolete), the name on no added line of the PR.

A removal whose line or test name comes back on an added line anywhere in the PR is a
move, not a removal; a test command whose test file the PR deletes goes with its test.
Each finding sits at the head line nearest to the removed one.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Container, Iterator

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.lines import MAX_LINE, indent_width, sides
from rules.silenced_test.commented import shell_function_call
from rules.silenced_test.line_structure import YAML_KEY_RE, SilencingView
from rules.silenced_test.silencing_detectors import NOT_RUN, Hit, skip_name
from rules.silenced_test.test_commands import Runs, command, silenced_targets, targets

_WORD_RE = re.compile(r"\w+")
# `- script: L2_x`, `- test: x`, `- tests/x/test_y.py`, `- run_x_test` (one word).
_YAML_ITEM_RE = re.compile(
    r"^-\s+(?:(?P<key>script|test|test_name|test-name|suite|test_suite|test-suite|test_file)"
    r"\s*:\s*)?[\"']?(?P<value>[\w./-]{3,120})[\"']?\s*$")
# An entry line of a Python suite list: a call or a string naming a test file or id.
_PY_ENTRY_RE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\(\s*)?[\"']([\w./:-]*test[\w./:\[\]-]*)[\"']\s*[,)]", re.I)
# The list holding it: `name = [`, `"suite-name": [`, `name=[`.
_PY_HOLDER_RE = re.compile(r"^\s*[\"']?([\w.-]+)[\"']?\s*(?::[^=]*)?[:=]\s*[\[({]")
_TOKEN_RE = re.compile(r"[^\s\"'`;|&()=,\[\]{}]+")
_DEF_TEST_RE = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(")
_LIST_FILE_RE = re.compile(r"(?:^|/)(?:models|tests|suites?)[\w.-]*\.txt$", re.I)
# A PR that says it fixes tests or CI (where deleting a test hides the failure).
_FIX_TESTS_RE = re.compile(
    r"\bfix\w*\b[^\n]{0,80}\b(?:tests?|ci|unit ?tests?|e2e|flak\w*)\b"
    r"|\b(?:tests?|ci|e2e)\b[^\n]{0,40}\bfix\w*|\bflak\w*|\[ci\]\s*fix", re.I)


def fixes_tests(title: str) -> bool:
    return _FIX_TESTS_RE.search(title) is not None


def _head_line(hunk: Hunk, old_no: int | None) -> int | None:
    lines = hunk.lines
    at = next((i for i, line in enumerate(lines) if line.old_no == old_no), 0)
    after = next((line.new_no for line in lines[at:] if line.new_no is not None), None)
    before = next((line.new_no for line in reversed(lines[:at]) if line.new_no is not None),
                  None)
    return after or before  # None: the hunk shows no head line (the file was emptied)


class PullRequestAdds:
    """What the PR's head adds anywhere: its added lines, their words and test commands."""

    def __init__(self, files: tuple[ChangedFile, ...]) -> None:
        added = [line.text[:MAX_LINE] for f in files for line in f.added_lines]
        # Added lines as code: `# pytest x` counts as `pytest x` (commented out, which the
        # commented-out detector reports), so a removal is never reported twice.
        self.lines = frozenset(text.strip().lstrip("#").strip() for text in added)
        self.text = "\n".join(added)
        self.runs = Runs.of(added)
        # Paths and file names on added lines, looked up per removed test (a set, not a
        # scan of the PR's text per removal).
        tokens = {t.split("::", 1)[0].removeprefix("./") for t in _TOKEN_RE.findall(self.text)}
        self.names = frozenset(t.rsplit("/", 1)[-1] for t in tokens) | tokens
        self.words = frozenset(_WORD_RE.findall(self.text))
        self.paths = sorted(tokens)
        # Test files the PR deletes or moves: a command for them went with them.
        self.removed_paths = frozenset(
            [f.path for f in files if f.status == "removed"]
            + [f.previous_path for f in files if f.previous_path and f.status == "renamed"])


def _gone(target: str, adds: PullRequestAdds) -> bool:
    """The test file of `target` is deleted or moved by the PR (its command went with
    it), or its file name is on an added line (invoked from elsewhere now)."""
    path = target.split("::", 1)[0].rstrip("/")
    if any(p == path or p.startswith(path + "/") for p in adds.removed_paths):
        return True
    name = path.rsplit("/", 1)[-1]
    if path in adds.names or ("." in name and name in adds.names):
        return True
    # A directory whose files the PR's added lines name (now run one by one).
    at = bisect_left(adds.paths, path + "/")
    return at < len(adds.paths) and adds.paths[at].startswith(path + "/")


def removal_hits(view: SilencingView, suffix: str, adds: PullRequestAdds,
                 fix_pr: bool, list_file: Container[str]) -> Iterator[Hit]:
    """Hits for tests this file's hunks remove (see the module docstring)."""
    changed = view.changed
    is_list = suffix == ".txt" and (changed.path in list_file
                                    or _LIST_FILE_RE.search(changed.path) is not None)
    for hunk in changed.hunks:
        # A hunk that also adds a test function renamed or rewrote one, not deleted it.
        renamed = any(_DEF_TEST_RE.match(line.text[:MAX_LINE]) for line in hunk.added)
        # A command without test paths rewritten in place (`-k` widened) is a change the
        # line detectors read, not a removal.
        rewritten = any(command(line.text[:MAX_LINE].strip()) for line in hunk.added)
        for line in hunk.removed:
            text = line.text[:MAX_LINE]
            code = text.strip()
            if not code or code.startswith("#") or code in adds.lines:
                continue  # blank, already a comment, or moved
            hit: Hit | None = None
            if suffix == ".sh" and command(code) is None:
                name = code.split()[0] if code.split() else ""
                if shell_function_call(view, code) and name not in adds.words and \
                        _defined_in_head(changed, name, shell=True):
                    hit = Hit(0, f"`{code[:80]}`", NOT_RUN, name, verb="removed")
            elif suffix == ".yaml" and command(code) is None:
                entry = _yaml_test_item(hunk, line.old_no, code)
                if entry and entry not in adds.words and entry not in adds.names:
                    hit = Hit(0, f"`{code[:80]}`", NOT_RUN, entry, verb="removed")
            elif suffix in (".sh", ".yaml"):
                cmd = command(code)
                if cmd is None:
                    continue
                gone = [t for t in silenced_targets(cmd, view.runs_of("base"),
                                                    view.runs_of("head"))
                        if not _gone(t, adds) and not adds.runs.runs(cmd, t)]
                if gone and (targets(cmd) or not (rewritten or adds.runs.runs(cmd, None))):
                    hit = Hit(0, f"`{code[:80]}`", NOT_RUN, gone[0], verb="removed")
            elif suffix == ".py" and (entry := _python_test_entry(changed, hunk, text)):
                if entry not in adds.names and entry.rsplit("/", 1)[-1] not in adds.names \
                        and not _gone(entry, adds):
                    hit = Hit(0, f"`{code[:80]}`", NOT_RUN, entry, verb="removed",
                              where=" from the test list")
            elif is_list:
                hit = Hit(0, f"`{code[:80]}`", NOT_RUN, code[:80], verb="removed",
                          where=f" from `{changed.path.rsplit('/', 1)[-1]}`")
            elif suffix == ".py" and fix_pr and not renamed and \
                    (match := _DEF_TEST_RE.match(text)):
                name = match.group(1)
                if name not in adds.words and not _defined_in_head(changed, name):
                    hit = Hit(0, f"test `{name}`", NOT_RUN, name, verb="deleted",
                              medium=True)
            at = _head_line(hunk, line.old_no) if hit is not None else None
            if hit is not None and at is not None:
                yield Hit(at, hit.what, hit.why, hit.subject, at, hit.verb, hit.where,
                          hit.medium, True)


def _yaml_test_item(hunk: Hunk, old_no: int | None, code: str) -> str | None:
    """The test a removed YAML list item names (`- script: L2_Launch_llama`, `- test_x`,
    `- run_gsm8k_test`), unless its list is a skip list (removing from it re-enables)."""
    match = _YAML_ITEM_RE.match(code)
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


def _python_test_entry(changed: ChangedFile, hunk: Hunk, text: str) -> str | None:
    """The test a removed entry of a Python suite list names (`TestFile("test_x.py",
    60),` in run_suite.py, `"tests/unit/test_y.py",`), outside test modules (where
    strings are parametrizations) and skip lists."""
    name = changed.path.rsplit("/", 1)[-1]
    if name.startswith(("test_", "conftest")) or name.endswith("_test.py"):
        return None
    match = _PY_ENTRY_RE.match(text)
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


def _defined_in_head(changed: ChangedFile, name: str, shell: bool = False) -> bool:
    """Whether the head still defines the test (unknown without the head text: a shell
    test function is then taken as kept, a Python test as gone)."""
    head = changed.head_text
    if head is None:
        return shell
    pattern = (rf"^\s*(?:function\s+)?{re.escape(name)}\s*(?:\(\s*\)|\{{)" if shell
               else rf"def\s+{re.escape(name)}\b")
    return re.search(pattern, head, re.M) is not None
