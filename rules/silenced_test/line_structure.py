"""silenced-test's view of the known head lines: their structure, diff facts and hints.

On the known lines (`rules.analysis.lines.known_lines`): the removed line an added
line replaces, the YAML key or Python list a line sits in, and the step or job a YAML
line belongs to. Found by indentation and a few anchored patterns, walking back at
most `_SCAN` lines, because the text may be partial or invalid.

Unlike `yamlscan` (a full scan of a YAML file), these answer one line at a time, also
for Python, and count tabs as indentation.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING

from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.lines import MAX_LINE, code_part, indent_width, known_lines
from rules.analysis.literals import any_of
from rules.silenced_test.continued import head_command, replaced_command
from rules.silenced_test.test_commands import Runs, config_testpaths, newly_covered, side_runs

if TYPE_CHECKING:
    from rules.silenced_test.pr_failing import PrFailing

_SCAN = 300  # lines a structure lookup walks back before giving up

_PY_OPENER_RE = re.compile(
    r"^\s*(?:(?P<name>[A-Za-z_][\w.]*)\s*(?::[^=\n]*)?\+?=|[\"'](?P<key>[^\"'\n]+)[\"']\s*:)"
    r"\s*(?:[\w.]+\()?[\[({]\s*(?:#.*)?$"
)
_BARE_OPENER_RE = re.compile(r"^\s*(?:[\"'][^\"'\n]*[\"']\s*,\s*)?[\[({]\s*$")
YAML_KEY_RE = re.compile(r"^\s*(?P<dash>-\s+)?(?P<key>[\w./-]+)\s*:(?:\s+(?P<val>.*))?$")
_OWNER_RE = re.compile(r"^\s*(?:-\s+)?(?:label|name):\s*[\"']?([^\"'#\n]+)")
_GENERIC_KEYS = frozenset({"steps", "jobs", "with", "env", "retry", "automatic", "matrix",
                           "strategy", "plugins", "agents", "soft_fail", "commands"})
# Cheap substring tests that let almost every line skip the regexes (200k-line PRs).
_YAML_HINTS = ("skip", "xfail", "flaky", "retry", "disabled", "expectedfailure", "exclu",
               "quarant", "blocklist", "denylist", "blacklist", "ignore", "known_fail",
               "continue", "if:", "soft_fail", "automatic", "enabled", "require")
ARG_HINTS = ("--ignore", "--deselect", "-k", "--reruns")
_SKIP_HINTS = ("skip", "exclu", "disable", "quarant", "blocklist", "denylist", "blacklist",
               "xfail", "flaky", "ignore", "known_fail")
# Every hint above, lowercased, minus those another one contains ("disabled" has
# "disable", "--ignore" has "ignore"): a file whose text has none of them and whose
# added lines have no `#` cannot yield a hit, and most files of a large PR are such.
ANY_HINT = ("skip", "xfail", "flaky", "retry", "disable", "expectedfailure", "exclu",
             "quarant", "blocklist", "denylist", "blacklist", "ignore", "known_fail",
             "continue", "if:", "soft_fail", "automatic", "--deselect", "-k", "--reruns",
             "enabled", "require", "xit(", "pit(", "xdescribe(", "pdescribe(", "xcontext(",
             "pcontext(")
has_any_hint = any_of(ANY_HINT)  # one pass over every file's whole known text
IGNORE_ARG_RE = re.compile(
    r"(?P<flag>--ignore(?:-glob)?|--deselect)(?:=|\s+)(?P<v>[^\s\"',;)\]\\]+)"
)
_TOKEN_RE = re.compile(r"[^\s\"',;()\[\]=\\]+")


class KnownLines:
    """The head-side lines of one file that we know (full text or patch), with diff facts."""

    def __init__(self, changed: ChangedFile) -> None:
        self.changed = changed
        self.lines = known_lines(changed)
        self.added = changed.added_line_numbers
        self._parents: dict[int, tuple[str, int] | None] = {}

    @cached_property
    def removed(self) -> dict[int, tuple[frozenset[str], dict[str, list[str]]]]:
        """Per added line: its hunk's removed lines, as a set and indexed by 8-char
        prefix (built on first use: a file read only for removed tests never asks)."""
        found: dict[int, tuple[frozenset[str], dict[str, list[str]]]] = {}
        for hunk in self.changed.hunks:
            lines = [ln.text.strip() for ln in hunk.removed]
            index: dict[str, list[str]] = {}
            for old in lines:
                index.setdefault(old[:8], []).append(old)
            facts = (frozenset(lines), index)
            for ln in hunk.added:
                if ln.new_no is not None:
                    found[ln.new_no] = facts
        return found

    def get(self, n: int) -> str | None:
        text = self.lines.get(n)
        return None if text is None else text[:MAX_LINE]

    def was_removed(self, n: int, text: str) -> bool:
        return text in self.removed.get(n, (frozenset(), {}))[0]

    def counterpart(self, n: int, text: str) -> str:
        """The removed line this added line replaces (longest shared prefix, ≥ 8 chars)."""
        best, size, new = "", 7, text.strip()
        for old in self.removed.get(n, (frozenset(), {}))[1].get(new[:8], [])[:50]:
            common = next((i for i, (a, b) in enumerate(zip(new, old, strict=False)) if a != b),
                          min(len(new), len(old)))
            if common > size:
                best, size = old, common
        return best

    @cached_property
    def _hunk_of(self) -> dict[int, Hunk]:
        return {ln.new_no: hunk for hunk in self.changed.hunks for ln in hunk.added
                if ln.new_no is not None}

    def replaced_command(self, n: int) -> str:
        """The removed logical command (`\\` continuations joined) that the logical command
        holding added line n replaces, "" when its hunk removes none like it: a command
        re-wrapped one argument per line still has the arguments it had."""
        hunk = self._hunk_of.get(n)
        return "" if hunk is None else replaced_command(hunk, head_command(self.get, n))

    def back(self, n: int) -> Iterator[tuple[int, str]]:
        """Non-blank, non-comment lines above n, stopping at the first unknown line."""
        for m in range(n - 1, max(0, n - _SCAN), -1):
            text = self.get(m)
            if text is None:
                return
            if text.strip() and not text.lstrip().startswith("#"):
                yield m, text

    def parent(self, n: int, yaml: bool) -> tuple[str, int] | None:
        """The container (YAML key or Python list name) of line n, memoized for siblings."""
        if n in self._parents:
            return self._parents[n]
        text = self.get(n) or ""
        ind, item = indent_width(text), text.lstrip().startswith("- ")
        found: tuple[str, int] | None = None
        for m, other in self.back(n):
            o_ind, other_item = indent_width(other), other.lstrip().startswith("- ")
            if o_ind == ind and item == other_item and m in self._parents:
                found = self._parents[m]
                break
            if o_ind > ind or (o_ind == ind and (not (yaml and item) or other_item)):
                continue
            if _BARE_OPENER_RE.match(other):
                ind = o_ind  # `[` on its own line, or `"model", [`: keep climbing
                continue
            if yaml:
                key = YAML_KEY_RE.match(other)
                if key and not code_part(key.group("val") or "").strip():
                    found = (key.group("key"), m)
            elif "parametrize(" in other:
                found = ("parametrize", m)
            elif match := _PY_OPENER_RE.match(other):
                found = (match.group("name") or match.group("key") or "", m)
            break
        self._parents[n] = found
        return found

    def owner(self, n: int) -> tuple[str, int] | None:
        """The Buildkite step label, GitHub step name or job id a YAML line belongs to."""
        text = self.get(n) or ""
        level = indent_width(text) + (2 if text.lstrip().startswith("- ") else 0)
        for m, other in self.back(n):
            o_ind, is_item = indent_width(other), other.lstrip().startswith("- ")
            label = _OWNER_RE.match(other)
            if (o_ind + 2 if is_item else o_ind) <= level and label:
                return label.group(1).strip(), m
            if o_ind < level:
                key = YAML_KEY_RE.match(other)
                if key and not is_item and not code_part(key.group("val") or "").strip() and \
                        key.group("key") not in _GENERIC_KEYS and o_ind > 0:
                    return key.group("key"), m
                level = o_ind
        return None


class SilencingView(KnownLines):
    """Known lines plus what silenced-test pre-computes per file: which hints occur."""

    def __init__(self, changed: ChangedFile, known: str, lowered: str, moved: Counter[str],
                 failing: PrFailing, backends: frozenset[str] = frozenset(),
                 repo: RepoView | None = None, removed_defs: frozenset[str] = frozenset()
                 ) -> None:
        super().__init__(changed)
        self.removed_defs = removed_defs  # what the PR's removed lines define: moved tests
        self.repo = repo  # the base checkout, when known: its pytest config
        self.moved = moved  # removed lines of the whole PR: a line added back was moved
        self.failing = failing  # where the PR says it silences tests because they fail
        self.backends = backends  # platforms the PR adds (gates off them silence nothing)
        self._known, self._lowered = known, lowered
        self._runs: Counter[str] | None = None
        self._side_runs: dict[str, Runs] = {}

    @property
    def text(self) -> str:
        """The head-side lines we know, one per line."""
        return self._known

    # Which hints occur at all: most files have none, so most lines skip every regex.
    # Each is searched for on first use: a file read only for removed tests never asks.
    @cached_property
    def hints(self) -> tuple[str, ...]:
        return tuple(h for h in _YAML_HINTS if h in self._lowered)

    @cached_property
    def skippy(self) -> bool:
        return any(h in self._lowered for h in _SKIP_HINTS)

    @cached_property
    def args(self) -> bool:
        return any(h in self._known for h in ARG_HINTS)

    def runs_of(self, which: str) -> Runs:
        """The test commands the base or head side of this file runs (parsed on need)."""
        if which not in self._side_runs:
            self._side_runs[which] = side_runs(self.changed, which)
        return self._side_runs[which]

    @cached_property
    def _testpaths(self) -> tuple[str, ...] | None:
        return config_testpaths(self.repo)  # read once per file, only for an --ignore

    def never_ran(self, text: str, value: str) -> bool:
        """Whether the ignored `value` sits in a selection the PR broadened and the base,
        whose whole text is known, never ran it (`test_commands.newly_covered`)."""
        return self.changed.base_text is not None and \
            newly_covered(text, value, self.runs_of("base"), self._testpaths)

    def runs(self, target: str) -> int:
        """How often `target` appears in this file other than as an --ignore/--deselect value."""
        if self._runs is None:
            text = "\n".join(self.lines.values())
            self._runs = Counter(_TOKEN_RE.findall(text))
            self._runs.subtract(m.group("v") for m in IGNORE_ARG_RE.finditer(text))
        return self._runs[target]
