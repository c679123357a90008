"""Silencing by deletion: a test invocation, a test-list entry or a test function that a
change removes instead of fixing: a test command removed from a CI script or workflow
whose tests no head command still runs; a call of a CI script's test function removed
(the function stays); an entry removed from a CI list file; a `def test_…` deleted in a
PR that says it fixes tests (medium), not renamed or split (moved_tests) and named by
the suite lists if the repository has them (suite_lists); a reusable workflow's `tests:`
input whose test no changed CI file names any more, though the base has it (medium: a
workflow the PR leaves alone may still run it). A removal whose line or test
name comes back on an added line anywhere in the PR is a move; a test command whose
test file, or selected test function (`file.py::test_x`), the PR deletes goes with its
test. Findings sit at the nearest head line.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Container, Iterator
from functools import cached_property

from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.lines import MAX_LINE
from rules.silenced_test.commented import shell_function_call
from rules.silenced_test.expansion import MakeTargets
from rules.silenced_test.line_structure import SilencingView
from rules.silenced_test.moved_tests import moved_into, survives
from rules.silenced_test.quoting import clip
from rules.silenced_test.removed_entries import (
    PY_ENTRY_RE,
    YAML_ITEM_RE,
    defined_in_head,
    deleted_definitions,
    python_test_entry,
    subject_gone,
    test_input_paths,
    test_module,
    yaml_test_item,
)
from rules.silenced_test.silencing_detectors import NOT_RUN, Hit
from rules.silenced_test.suite_lists import never_listed
from rules.silenced_test.test_commands import (
    Runs,
    command,
    commented_back,
    silenced_targets,
    targets,
)

_WORD_RE = re.compile(r"\w+")
_MAX_REMOVED = 200  # removed lines examined per file: beyond that, a rewrite of the file
# Words a line must hold to be read as a test command at all (most removed lines do not).
_RUNNER_HINT_RE = re.compile(r"test|suite|script|torchrun|deepspeed|mpirun|accelerate|\.sh\b", re.I)
_SH_RE = re.compile(r"\.sh\b")
_TOKEN_RE = re.compile(r"[^\s\"'`;|&()=,\[\]{}]+")
_DEF_TEST_RE = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(")
_LIST_FILE_RE = re.compile(r"(?:^|/)(?:models|tests|suites?)[\w.-]*\.txt$", re.I)
# A PR that says it fixes tests or CI (where deleting a test hides the failure).
_FIX_TESTS_RE = re.compile(
    r"\bfix\w*\b[^\n]{0,80}\b(?:tests?|ci|unit ?tests?|e2e|flak\w*)\b"
    r"|\b(?:tests?|ci|e2e)\b[^\n]{0,40}\bfix\w*|\bflak\w*|\[ci\]\s*fix", re.I)


def _runner_hint(code: str) -> bool:
    """`_RUNNER_HINT_RE.search(code)`, asked of every removed line: on ASCII text (where
    lowercasing is what re.I does) substring tests, several times faster than the regex."""
    if not code.isascii():
        return _RUNNER_HINT_RE.search(code) is not None
    low = code.lower()  # spelled out: `any()` over the words costs twice as much
    return "test" in low or "suite" in low or "script" in low or "torchrun" in low or \
        "deepspeed" in low or "mpirun" in low or "accelerate" in low or \
        (".sh" in low and _SH_RE.search(low) is not None)


def fixes_tests(title: str) -> bool:
    return _FIX_TESTS_RE.search(title) is not None


def head_line_after(hunk: Hunk, old_no: int | None) -> int | None:
    """The head line nearest a removed base line: the next one, else the one before."""
    lines = hunk.lines
    at = next((i for i, line in enumerate(lines) if line.old_no == old_no), 0)
    after = next((line.new_no for line in lines[at:] if line.new_no is not None), None)
    before = next((line.new_no for line in reversed(lines[:at]) if line.new_no is not None),
                  None)
    return after or before  # None: the hunk shows no head line (the file was emptied)


class PullRequestAdds:
    """What the PR's head adds anywhere: its added lines, their words and test commands,
    each computed on first use (most PRs remove no test)."""

    def __init__(self, files: tuple[ChangedFile, ...], repo: RepoView | None = None,
                 says_moved: bool = False) -> None:
        self._files, self._repo, self._says_moved = files, repo, says_moved
        # Test files the PR deletes or moves: a command for them went with them.
        self.removed_paths = frozenset(
            [f.path for f in files if f.status == "removed"]
            + [f.previous_path for f in files if f.previous_path and f.status == "renamed"])

    @cached_property
    def new_test_files(self) -> tuple[str, ...]:
        """Test modules the PR adds, when its description says it moves tests."""
        return tuple(f.path for f in self._files if self._says_moved and
                     f.status == "added" and test_module(f.path))

    def moved_into(self, target: str, head: Runs) -> bool:
        return moved_into(target, self._files, self.new_test_files, head)

    def never_listed(self, test_path: str, method: str) -> bool:
        return never_listed(test_path, method, self._files, self._repo)

    @cached_property
    def make(self) -> MakeTargets | None:
        """The root Makefile's targets (head text when the PR changes it, else the base's):
        `make test` still runs what its recipe calls."""
        changed = next((f for f in self._files if f.path == "Makefile"), None)
        if changed is not None and changed.status == "removed":
            return None
        text = changed.head_text if changed is not None else None
        if text is None and self._repo is not None:
            text = self._repo.read("Makefile")
        return MakeTargets(text) if text else None

    @cached_property
    def deleted_defs(self) -> dict[str, frozenset[str]]:
        return deleted_definitions(self._files)

    @cached_property
    def _added(self) -> list[str]:
        return [line.text[:MAX_LINE] for f in self._files for line in f.added_lines]

    @cached_property
    def lines(self) -> frozenset[str]:
        """Added lines as code: `# pytest x` counts as `pytest x` (commented out, which
        the commented-out detector reports), so a removal is never reported twice."""
        return frozenset(text.strip().lstrip("#").strip() for text in self._added)

    @cached_property
    def runs(self) -> Runs:
        return Runs.of(self._added)

    @cached_property
    def _tokens(self) -> frozenset[str]:
        text = "\n".join(self._added)
        return frozenset(t.split("::", 1)[0].removeprefix("./") for t in _TOKEN_RE.findall(text))

    @cached_property
    def _heads(self) -> str | None:
        """The head text of every changed CI file (workflows, CI scripts and configs: what
        runs tests), None when one is known only by its patch."""
        texts = [f.head_text for f in self._files if f.status != "removed"
                 and f.surface in ("workflow", "ci-script", "ci-config")]
        return None if any(t is None for t in texts) else "\n".join(t or "" for t in texts)

    def orphaned(self, test_path: str) -> bool:
        """A test path no changed CI file's head names any more, that the PR neither
        deletes nor moves nor names on an added line: nothing the PR changed runs it. Not
        a path the base lacks (the repository view says so): a stale reference repaired."""
        heads = self._heads
        if heads is None or test_path in heads or _gone(test_path, self):
            return False
        folder, _, _ = test_path.rstrip("/").rpartition("/")
        listing = self._repo.list_dir(folder) if self._repo is not None else None
        return listing is None or any(p == test_path.rstrip("/") or p.startswith(test_path)
                                      for p in listing)

    def subject_gone(self, changed: ChangedFile, hunk: Hunk, old_no: int | None) -> bool:
        return subject_gone(changed, hunk, old_no, self._files, self._repo)

    @cached_property
    def names(self) -> frozenset[str]:
        """Paths and file names on added lines (a set, not a scan per removal)."""
        return frozenset(t.rsplit("/", 1)[-1] for t in self._tokens) | self._tokens

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(w for text in self._added for w in _WORD_RE.findall(text))

    @cached_property
    def paths(self) -> list[str]:
        return sorted(self._tokens)


def _gone(target: str, adds: PullRequestAdds) -> bool:
    """The test file of `target` is deleted or moved by the PR (its command went with
    it), or so is the test function or class it selects (`file.py::test_x`), or its file
    name is on an added line (invoked from elsewhere now)."""
    path, _, selected = target.partition("::")
    path = path.rstrip("/")
    if any(p == path or p.startswith(path + "/") for p in adds.removed_paths):
        return True
    deleted = adds.deleted_defs.get(path) if selected else None
    if deleted and any(name.split("[", 1)[0] in deleted for name in selected.split("::")):
        return True
    name = path.rsplit("/", 1)[-1]
    if path in adds.names or ("." in name and name in adds.names):
        return True
    # A directory whose files the PR's added lines name (now run one by one).
    at = bisect_left(adds.paths, path + "/")
    return at < len(adds.paths) and adds.paths[at].startswith(path + "/")


def may_remove_tests(changed: ChangedFile, suffix: str, fix_pr: bool) -> bool:
    """Whether any removed line of the file could be a test invocation or entry (one
    search over the removed text; most files of a large PR remove none). A test module
    only counts in a PR that fixes tests (where a deleted test is read)."""
    if suffix in (".sh", ".txt"):
        return True
    if suffix == ".py" and test_module(changed.path) and not fix_pr:
        return False
    removed = "\n".join(line.text[:MAX_LINE] for line in changed.removed_lines)
    return _runner_hint(removed)


def removal_hits(view: SilencingView, suffix: str, adds: PullRequestAdds,
                 fix_pr: bool, list_file: Container[str]) -> Iterator[Hit]:
    """Hits for tests this file's hunks remove (see the module docstring)."""
    changed = view.changed
    is_list = suffix == ".txt" and (changed.path in list_file
                                    or _LIST_FILE_RE.search(changed.path) is not None)
    budget = _MAX_REMOVED
    inputs: set[str] = set()  # test paths of removed `tests:` inputs already reported
    for hunk in changed.hunks:
        # What the hunk adds in place of what it removes (a test function, a test
        # command, a list entry of the same shape): a removal next to its replacement is
        # a rewrite (renamed, re-pointed, re-flagged), which the line detectors read.
        added: list[str] | None = None
        rewritten: bool | None = None
        for line in hunk.removed:
            text = line.text[:MAX_LINE]
            code = text.strip()
            if not code or code.startswith("#") or budget <= 0:
                continue  # blank, already a comment, or past the budget
            budget -= 1
            if added is None:
                added = [ln.text[:MAX_LINE].strip() for ln in hunk.added]
            hit: Hit | None = None
            cmd = None
            if suffix in (".sh", ".yaml") and _runner_hint(code):
                if rewritten is None:  # one search of the added text before a line each
                    rewritten = _runner_hint("\n".join(added)) and \
                        any(_runner_hint(t) and command(t) for t in added)
                if rewritten:
                    continue
                cmd = command(code)
            if suffix == ".sh" and cmd is None:
                name = code.split()[0] if code.split() else ""
                if shell_function_call(view, code) and name not in adds.words and \
                        defined_in_head(changed, name, shell=True):
                    hit = Hit(0, f"`{clip(code)}`", NOT_RUN, name, verb="removed")
            elif suffix == ".yaml" and cmd is None:
                entry = yaml_test_item(hunk, line.old_no, code)
                if entry and entry not in adds.words and entry not in adds.names and \
                        not any(YAML_ITEM_RE.match(t) and "test" in t.lower() for t in added):
                    hit = Hit(0, f"`{clip(code)}`", NOT_RUN, entry, verb="removed")
                elif changed.surface in ("workflow", "ci-config") and (left := [
                        p for p in test_input_paths(code) if adds.orphaned(p) and p not in inputs]):
                    # Medium: a workflow the PR leaves alone may still run it.
                    hit = Hit(0, f"`{clip(code)}`", NOT_RUN, left[0], verb="removed", medium=True)
                    inputs.add(left[0])  # several jobs re-pointed away from it: one finding
            elif suffix in (".sh", ".yaml") and cmd is not None:
                gone = [t for t in silenced_targets(cmd, view.runs_of("base"),
                                                    view.runs_of("head"), adds.make)
                        if not _gone(t, adds) and not adds.runs.runs(cmd, t)
                        and not adds.moved_into(t, view.runs_of("head"))]
                if gone and not commented_back(cmd, added) and (targets(cmd) or not (
                        adds.runs.runs(cmd, None) or adds.runs.makes(cmd, adds.make))):
                    hit = Hit(0, f"`{clip(code)}`", NOT_RUN, gone[0], verb="removed")
            elif suffix == ".py" and (entry := python_test_entry(changed, hunk, text)):
                if entry not in adds.names and entry.rsplit("/", 1)[-1] not in adds.names \
                        and not _gone(entry, adds) and \
                        not any(PY_ENTRY_RE.match(t) for t in added):
                    hit = Hit(0, f"`{clip(code)}`", NOT_RUN, entry, verb="removed",
                              where=" from the test list")
            elif is_list and not [t for t in added if t and not t.startswith("#")]:
                hit = Hit(0, f"`{clip(code)}`", NOT_RUN, code[:80], verb="removed",
                          where=f" from `{changed.path.rsplit('/', 1)[-1]}`")
            elif suffix == ".py" and fix_pr and \
                    (match := _DEF_TEST_RE.match(text)) and \
                    not any(_DEF_TEST_RE.match(t) for t in added):  # not renamed in place
                name = match.group(1)
                if name not in adds.words and not defined_in_head(changed, name) and \
                        not survives(name, added, adds.words, adds.lines) and \
                        not adds.never_listed(changed.path, name) and \
                        not adds.subject_gone(changed, hunk, line.old_no):
                    hit = Hit(0, f"test `{name}`", NOT_RUN, name, verb="deleted",
                              medium=True)
            if hit is None or code in adds.lines:
                continue  # nothing removed, or moved (a line added back elsewhere)
            at = head_line_after(hunk, line.old_no)
            if at is not None:
                yield Hit(at, hit.what, hit.why, hit.subject, at, hit.verb, hit.where,
                          hit.medium, True)
