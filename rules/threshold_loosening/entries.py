"""Eval entries removed: an accuracy or eval case dropped from the list CI runs.

Dropping a model from an eval workflow's model list, or an accuracy test from a nightly
suite, removes its gate entirely: the loosest loosening. Two shapes are read, both only
in an eval context (the file's path or the list's name says accuracy/eval/gsm8k/…):

- an inline list that shrinks (`default: '[a, b, c]'` → `'[a, c]'`), paired by the text
  before the list on one removed and one added line, unless the PR adds an eval file
  (the job moved to a new workflow);
- whole entries removed (a `TestFile(... "TestModelAccuracy.test_x" ...)` block), whose
  quoted names appear on no added line of the PR (a moved entry is not removed). A YAML
  list item counts only when removed with everything under it (`yaml_items`): stage
  headers removed to merge stages remove no step;
- a gate set a YAML case stops merging in (`benchmarks:` / `<<: *benchmarks_perf1`,
  `aliases`): the case stays, its gates go.

Skip and exclude lists are the opposite (removing from them restores coverage) and are
never read. A field dropped from one record (`"lm_eval_extra_model_args": "…",` inside one
model's entry) is not an entry: a record's fields repeat across its siblings, so a
removed `key: scalar` line whose key is still a key elsewhere in the file is a field.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.core.snapshot import ChangedFile, Hunk, LineKind
from rules.analysis.lines import removed_runs
from rules.threshold_loosening.aliases import gate_aliases
from rules.threshold_loosening.yaml_items import enclosing, whole_items

_EVAL_RE = re.compile(
    r"accuracy|(?<![a-z])evals?(?![a-z])|evaluat|gsm8k|mmlu|lm[-_]?eval|humaneval|gpqa|aime",
    re.I)
_SKIP_RE = re.compile(r"skip|ignore|exclude|deselect|xfail|disabl|blocklist|denylist|quarantin",
                      re.I)
_INLINE_RE = re.compile(r"^(?P<head>[^\[\n]{0,200}?)\[(?P<items>[^\[\]\n]{1,20000})\]")
_LITERAL_RE = re.compile(r"\"([^\"\n]{3,200})\"|'([^'\n]{3,200})'")
_MAX_NAMED = 4
# Entry names are identifiers, paths or model ids; prose in a removed log call is not one.
_NAME_RE = re.compile(r"[\w.:/@+-]{3,200}")
_OPENERS = ("[", "(", "{", ":", ",")
_YAML_NAME_RE = re.compile(
    r"^\s*-\s+(?:model|model_name|model_id|name|task|task_name|test|benchmark)\s*:\s*"
    r"([\w.:/@+-]{3,200})\s*(?:#.*)?$")
# `"key": scalar,` / `key: scalar` / `key=scalar,`: one field of a record (not opening one).
_FIELD_RE = re.compile(
    r"""^\s*(["']?)(?P<key>[A-Za-z_][\w.-]{0,80})\1\s*[:=]\s*(?![\[{(\s])[^\n]*?(?<![\[{(:])\s*,?\s*$""")
# Words as entries are written: model ids, test ids, paths (`org/m-7b`, `T.test_x`).
_WORD_RE = re.compile(r"[\w.*:/@+-]+")


@dataclass(frozen=True)
class Removed:
    where: str  # the list: its key or the nearest line above
    items: tuple[str, ...]
    line: int  # a head line at or next to the removal


def _items(text: str) -> tuple[str, list[str]] | None:
    match = _INLINE_RE.match(text.strip())
    if match is None:
        return None
    items = [i.strip().strip("\"'` ") for i in match.group("items").split(",")]
    return match.group("head").strip(), [i for i in items if i]


class AddedWords:
    """The words on the PR's added lines, counted once per review (lazily: most PRs
    remove no eval entry), so each question is a lookup, not a scan of the PR."""

    def __init__(self, files: Sequence[ChangedFile]) -> None:
        self._files = files
        self._all: Counter[str] | None = None
        self._new_eval: bool | None = None

    def new_eval_file(self) -> bool:
        """Whether the PR adds an eval file (`api_eval.yml`): an eval job that leaves a
        workflow's matrix has most likely moved there (answered once per review)."""
        if self._new_eval is None:
            self._new_eval = any(f.status == "added" and _EVAL_RE.search(
                f.path.rsplit("/", 1)[-1]) is not None for f in self._files)
        return self._new_eval

    def all(self) -> Counter[str]:
        if self._all is None:
            self._all = Counter()
            for changed in self._files:
                self._all.update(_WORD_RE.findall(changed.added_text))
        return self._all


def _moved(item: str, words: AddedWords, own: Counter[str]) -> bool:
    """The item is added in another file of the PR (the eval moved to a new workflow):
    it is on more added lines of the PR than of this file."""
    return words.all()[item] > own[item]


def _shrunk_lists(hunk: Hunk, eval_path: bool, words: AddedWords,
                  own: Counter[str]) -> Iterator[Removed]:
    added: dict[str, tuple[int, list[str]]] = {}
    for line in hunk.added:
        parsed = _items(line.text) if "[" in line.text else None
        if parsed is not None and line.new_no is not None:
            added.setdefault(parsed[0], (line.new_no, parsed[1]))
    for line in hunk.removed:
        parsed = _items(line.text) if "[" in line.text else None
        if parsed is None or parsed[0] not in added:
            continue
        head, old = parsed
        number, new = added[head]
        gone = [i for i in old if i not in new]
        if not gone or any(i not in old for i in new) or _SKIP_RE.search(head):
            continue
        if not (eval_path or _EVAL_RE.search(head) or any(_EVAL_RE.search(i) for i in gone)):
            continue
        gone = [i for i in gone if not _moved(i, words, own)]  # the costly test last
        if gone:
            yield Removed(head.rstrip(":= '\"") or "list", tuple(gone), number)


def _opener(hunk: Hunk, index: int) -> tuple[str, int] | None:
    """The nearest head-side line above lines[index] (the list the entry sat in)."""
    for line in reversed(hunk.lines[:index]):
        if line.kind is LineKind.CONTEXT and line.new_no is not None:
            return line.text.strip(), line.new_no
    return None


def _fields_of_surviving_records(block: list[str], changed: ChangedFile) -> bool:
    """Every removed line is a `key: scalar` field whose key other records still use."""
    head = changed.head_text
    if head is None:
        return False
    for text in block:
        match = _FIELD_RE.match(text)
        if match is None:
            return False
        key = re.escape(match.group("key"))
        if re.search(rf"""(?m)^\s*["']?{key}["']?\s*[:=]""", head) is None:
            return False
    return True


def _removed_blocks(hunk: Hunk, words: AddedWords, eval_path: bool,
                    changed: ChangedFile) -> Iterator[Removed]:
    lines = hunk.lines
    for start, i in removed_runs(hunk):
        # A YAML list keeps its items whole or not at all: a stage header removed
        # over kept steps removes nothing; a step removed beside it does.
        spans = whole_items(changed, hunk, start, i)
        if spans is None and any(line.kind is LineKind.ADDED for line in lines[i:i + 1]):
            continue  # replaced in place: a change, read by the knob analyses
        opener = _opener(hunk, start)
        if opener is None or _SKIP_RE.search(opener[0]) or spans == []:
            continue
        where = opener[0].rstrip(":=[({ ") or "list"
        if spans is None:
            block = [line.text for line in lines[start:i]]
        else:
            block = [lines[j].text for a, b in spans for j in range(a, b)]
            key = enclosing(changed, hunk, spans[0][0])
            if key is not None and not _SKIP_RE.search(key):
                where = key
        if any(_SKIP_RE.search(text) for text in block):
            continue
        if _fields_of_surviving_records(block, changed):
            continue  # a field dropped from a record, read by the knob analyses
        # An entry of a list or mapping: the line above opens or continues one.
        if not (opener[0].endswith(_OPENERS) or block[0].lstrip().startswith("- ")):
            continue
        listed = _EVAL_RE.search(opener[0]) is not None
        names = [a or b for text in block if not text.lstrip().startswith("#")
                 for a, b in _LITERAL_RE.findall(text)]
        # A YAML entry names itself unquoted: `- model_name: org/m-7b`.
        # In an eval config (its path says so) each such entry is an eval case.
        entries = [m.group(1) for text in block if (m := _YAML_NAME_RE.match(text))]
        names += entries
        gone = [n for n in names if _NAME_RE.fullmatch(n) and (
            listed or _EVAL_RE.search(n) or (eval_path and n in entries))
                and not words.all()[n]]
        # The most specific name of each entry: the one naming the eval case.
        named = [n for n in gone if _EVAL_RE.search(n) and "." in n and "/" not in n] or gone
        if named:
            yield Removed(where, tuple(dict.fromkeys(named)), opener[1])


def removed_entries(changed: ChangedFile, words: AddedWords) -> list[Removed]:
    """Eval entries this file's hunks remove (see the module docstring), one per file."""
    if not changed.removed_lines:
        return []
    eval_path = _EVAL_RE.search(changed.path) is not None
    found: list[Removed] = []
    own: Counter[str] | None = None
    for hunk in changed.hunks:
        if not hunk.removed:
            continue
        if own is None:
            own = Counter(_WORD_RE.findall(changed.added_text))
        if not words.new_eval_file():
            found += _shrunk_lists(hunk, eval_path, words, own)
        found += _removed_blocks(hunk, words, eval_path, changed)
        found += [Removed(where, (item,), at) for where, item, at in gate_aliases(changed, hunk)]
    if not found:
        return []
    items = tuple(dict.fromkeys(i for r in found for i in r.items))
    return [Removed(found[0].where, items, found[0].line)]


def describe(removed: Removed) -> str:
    shown = ", ".join(f"`{i}`" for i in removed.items[:_MAX_NAMED])
    more = len(removed.items) - _MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")
