"""Benchmark and accuracy catalogs: entries keyed by model, compared entry by entry.

A catalog is a list of entries, each naming a model or case (`"model_name":
"DeepSeek-R1 TP4"`, `display:`, `model_path:`) with the server arguments it is served
with; the same rows are often mirrored in a workflow's inline table. Two things follow.

* Entries are compared within the same entry: when entries are reordered or inserted,
  the diff lines up `TP8`'s `--tensor-parallel-size 8` against `TP4`'s `4`. A change is
  re-paired with the value its own entry (by label, in the same Python function) had at
  the base revision.
* In a PR whose subject is the catalog ("update the DeepSeek FP4 recipe", "add X to
  the benchmark"), the serving configs are what is benchmarked, not CI-stability knobs
  tuned against a failure: their values are the PR's content, not a retune to explain.
  A PR that reads as a CI fix is not one of these.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.intent import ci_fix_phrase
from rules.analysis.knobs import Change
from rules.analysis.knobs.entries import owner
from rules.analysis.knobs.values import same_value
from rules.analysis.lines import indent_width

_MODEL_KEYS = ("model_name", "display", "case_name", "case", "model", "served_model_name",
               "model_path")
_LABEL_RE = re.compile(
    r"^\s*(?:-\s+)?[\"']?(" + "|".join(_MODEL_KEYS) + r")[\"']?\s*[:=]\s*[\"']?([^\"'\n,#]{1,160})")
_RECIPE_RE = re.compile(
    r"(?i)\brecipes?\b"
    r"|\bbenchmark(?:s|ing)?[ _-](?:coverage|presets?|catalog|models?|matrix|configs?)\b"
    r"|\b(?:add|adds|added|adding)\b[^.\n]{0,60}\bto (?:the )?(?:\w+ )?(?:benchmarks?|accuracy)"
    r"|\bmodel (?:coverage|catalog|matrix)\b|\bserving configs?\b")
# The keys naming the checkpoint an entry serves (not its display label, which may carry
# the parallelism: `DeepSeek-V3 TP8` → `TP4` is the same entry retuned).
_CHECKPOINT_KEYS = ("model_path", "model", "served_model_name")
_DATA_SUFFIXES = (".json", ".yaml", ".yml", ".toml", ".jsonl")
_MAX_TEXT = 100_000
_MAX_SPAN = 200  # lines an entry may span


def recipe_update(snapshot: PullRequestSnapshot) -> bool:
    """Whether the PR says its subject is a recipe or the benchmark's model coverage
    (and does not read as a CI fix)."""
    text = f"{snapshot.title}\n{snapshot.body[:_MAX_TEXT]}"
    if _RECIPE_RE.search(text) is None:
        return False
    return ci_fix_phrase(snapshot.title, snapshot.body[:_MAX_TEXT], snapshot.labels) is None


def _entry(lines: Sequence[str], index: int) -> tuple[int, int] | None:
    """First and last line index of the `{…}` object or `- ` list item holding line
    `index` (0-based), or None."""
    if not 0 <= index < len(lines):
        return None
    own = indent_width(lines[index])
    depth = 0
    for j in range(index - 1, max(-1, index - _MAX_SPAN), -1):
        text = lines[j]
        depth += text.count("}") - text.count("{")
        if depth < 0:
            return j, _close(lines, j)
        stripped = text.lstrip()
        if stripped and indent_width(text) < own and depth == 0 and "{" not in text:
            if stripped.startswith("- "):
                return j, _item_end(lines, j)
            return None
    return None


def _close(lines: Sequence[str], start: int) -> int:
    depth = 0
    for j in range(start, min(len(lines), start + _MAX_SPAN)):
        depth += lines[j].count("{") - lines[j].count("}")
        if depth <= 0 and j > start:
            return j
    return min(len(lines), start + _MAX_SPAN) - 1


def _item_end(lines: Sequence[str], start: int) -> int:
    indent = indent_width(lines[start])
    for j in range(start + 1, min(len(lines), start + _MAX_SPAN)):
        if lines[j].strip() and indent_width(lines[j]) <= indent:
            return j - 1
    return min(len(lines), start + _MAX_SPAN) - 1


def _labels(lines: Sequence[str], span: tuple[int, int]) -> dict[str, str]:
    found: dict[str, str] = {}
    for j in range(span[0], span[1] + 1):
        match = _LABEL_RE.match(lines[j][:400])
        if match is not None:
            found.setdefault(match.group(1), match.group(2).strip())
    return found


def _label(lines: Sequence[str], span: tuple[int, int]) -> str | None:
    found = _labels(lines, span)
    return next((found[k] for k in _MODEL_KEYS if k in found), None)


def _other_model(base: Sequence[str], base_span: tuple[int, int], head: Sequence[str],
                 head_span: tuple[int, int]) -> bool:
    """Whether a renamed entry now runs another checkpoint (`model_path` changes with
    the name): a new entry in the old one's place, not the old one retuned."""
    before, after = _labels(base, base_span), _labels(head, head_span)
    return any(k in before and k in after and before[k] != after[k] for k in _CHECKPOINT_KEYS)


def _side(changed: ChangedFile, head: bool) -> list[str]:
    """One side's lines (0-based), from the full text or, without it, from the patch
    (unknown lines blank); kept on the file, as several changes ask."""
    key = "knob-rationale.catalog-head" if head else "knob-rationale.catalog-base"
    found = changed.derived.get(key)
    if isinstance(found, list):
        return found
    text = changed.head_text if head else changed.base_text
    if text is not None:
        lines = text[: _MAX_TEXT * 4].split("\n")
    else:
        # The file's shared mappings (read-only): the lines the patch shows on this side.
        known = changed.patch_head_lines if head else changed.patch_base_lines
        numbers = list(known)
        lines = [""] * max(numbers, default=0)
        for n in numbers:
            lines[n - 1] = known[n]
    changed.derived[key] = lines
    return lines


def _catalog_file(changed: ChangedFile, lines: Sequence[str]) -> bool:
    """A data file (not a workflow) listing two or more entries by model or case: its
    shared templates are part of the catalog too."""
    path = changed.path.lower()
    if not path.endswith(_DATA_SUFFIXES) or "/workflows/" in f"/{path}":
        return False
    labels = 0
    for text in lines:
        if _LABEL_RE.match(text[:400]) is not None:
            labels += 1
            if labels >= 2:
                return True
    return False


def in_catalog(changed: ChangedFile, line: int) -> bool:
    """Whether head line `line` (1-based) is part of a catalog: in an entry that names a
    model or case, or anywhere in a catalog data file."""
    lines = _side(changed, True)
    span = _entry(lines, line - 1)
    if span is not None and _label(lines, span) is not None:
        return True
    return _catalog_file(changed, lines)


def _value_in(lines: Sequence[str], span: tuple[int, int], raw: str) -> str | None:
    pattern = re.compile(
        rf"(?:--{re.escape(raw)}[= ]+|[\"']?{re.escape(raw)}[\"']?\s*[:=]\s*)[\"']?([^\s\"',]+)")
    for j in range(span[0], span[1] + 1):
        match = pattern.search(lines[j][:2000])
        if match is not None:
            return match.group(1)
    return None


def repaired(changed: ChangedFile, change: Change) -> Change | None:
    """The change paired within its own catalog entry: `change` itself when the diff
    paired it within one entry (or no entry is known); the base value of the same
    entry otherwise; None when that entry had the same value or is new."""
    old, new = change.old, change.new
    if new is None:
        return change
    head = _side(changed, True)
    head_span = _entry(head, new.line - 1)
    label = _label(head, head_span) if head_span is not None else None
    if label is None:
        return change
    base = _side(changed, False)
    if old is not None:
        base_span = _entry(base, old.line - 1)
        old_label = _label(base, base_span) if base_span is not None else None
        if old_label is None or old_label == label:
            return change
        if not _has_label(base, label) and not _has_label(head, old_label):
            if head_span is not None and base_span is not None and _other_model(
                    base, base_span, head, head_span):
                return None  # another model took the entry's place: new configuration
            return change  # the entry itself was renamed (`… TP8` → `… TP4`)
    # An entry of one test function is not another's: a fixture of a new test naming
    # the same model as an old test's (`"model": "Qwen/Qwen3-0.6B"`) is new data.
    function = owner(changed, True, new.line)
    for j, text in enumerate(base):
        match = _LABEL_RE.match(text[:400])
        if match is None or match.group(2).strip() != label:
            continue
        span = _entry(base, j)
        if span is None or _label(base, span) != label or owner(changed, False, j + 1) != function:
            continue
        value = _value_in(base, span, new.raw)
        if value is None:
            return Change(None, new)  # the knob is new to this entry
        if same_value(value, new.value):
            return None
        return Change((old or new)._replace(value=value, literal=True), new)
    return None  # a new entry: its values are new configuration


def _has_label(lines: Sequence[str], label: str) -> bool:
    for text in lines:
        match = _LABEL_RE.match(text[:400])
        if match is not None and match.group(2).strip() == label:
            return True
    return False
