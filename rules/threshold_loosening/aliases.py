"""Gates a YAML case stops merging in: a removed alias (`<<: *benchmarks_perf1`) whose
anchor holds gates.

YAML benchmark catalogs define each gate set once under an anchor (`_perf: &perf` with
`baseline:` and `threshold:` below it) and give it to a test case by alias or merge key
(`benchmarks:` / `<<: *perf`). Removing those lines leaves the case in the list, running
the server, with no gate: an eval entry removed, though no list item or quoted name goes.
Counted only when the alias names an anchor of the base whose node holds a gate or
tolerance key, the head refers to it less often than the base did (the case did not
move to another alias of the same set), the lines are not replaced in place by added
ones (a change of gate set, which the knob analyses read), and the case itself stays
(a whole case removed is the list-item reading's).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from bot.core.snapshot import ChangedFile, Hunk, LineKind
from rules.analysis.knobs import Categories, normalize
from rules.analysis.lines import indent_width, removed_runs
from rules.analysis.yamlscan import is_yaml

# `key: *name`, `<<: *name`, `- *name`: an alias as a whole value (not a glob in a string).
_ALIAS_RE = re.compile(
    r"^\s*(?:-\s+)?(?:(?P<key>[\w.-]+|<<)\s*:\s*)?\*(?P<name>[A-Za-z_][\w.-]{0,80})\s*(?:#.*)?$")
_KEY_RE = re.compile(r"^\s*(?:-\s+)?(?P<key>[\w.-]+)\s*:")
_CASE_RE = re.compile(r"^\s*-\s+(?:name|test_name|case|model)\s*:\s*[\"']?([^\"'#\n]{1,200})")
_ANCHOR_NODE = 200  # lines of an anchored node read for its gates
_MAX_WALK = 400  # base lines walked up to the case a removed alias belonged to
_GATE_KINDS = frozenset({"gate", "ceiling", "tolerance"})
_CATEGORIES = Categories()  # the defaults: removed_entries reads no configuration


def _gated(base: Mapping[int, str], name: str) -> bool:
    """Whether the base's anchor `&name` opens a node that holds a gate or tolerance key."""
    anchor = re.compile(rf"&{re.escape(name)}\s*(?:#.*)?$")
    start = next((n for n, text in base.items() if anchor.search(text)), None)
    if start is None:
        return False
    own = indent_width(base[start])
    for n in range(start + 1, start + _ANCHOR_NODE):
        text = base.get(n)
        if text is None:
            return False
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        if indent_width(text) <= own:
            return False
        key = _KEY_RE.match(text)
        if key and _CATEGORIES.kind(normalize(key.group("key"))) in _GATE_KINDS:
            return True
    return False


def _case(base: Mapping[int, str], old_no: int, indent: int) -> str | None:
    """The name of the list item (`- name: "case"`) a base line sits in."""
    for n in range(old_no - 1, max(0, old_no - _MAX_WALK), -1):
        text = base.get(n)
        if text is None:
            return None
        if text.strip() and indent_width(text) < indent:
            match = _CASE_RE.match(text)
            if match:
                return match.group(1).strip()
            if text.lstrip().startswith("- "):
                return None  # an unnamed item
    return None


def gate_aliases(changed: ChangedFile, hunk: Hunk) -> Iterator[tuple[str, str, int]]:
    """(case or key, `key: *alias`, head line) for each gated alias the hunk removes."""
    if not is_yaml(changed.path) or "*" not in "".join(ln.text for ln in hunk.removed):
        return
    base_lines = changed.base_lines
    base: Mapping[int, str] = (changed.patch_base_lines if base_lines is None else
                               dict(enumerate(base_lines, start=1)))
    head = changed.head_text if changed.head_text is not None else "\n".join(
        changed.patch_head_lines.values())
    lines = hunk.lines
    for start, i in removed_runs(hunk):
        if any(line.kind is LineKind.ADDED for line in lines[i:i + 1]):
            continue  # replaced in place
        run = lines[start:i]
        above = next((ln.new_no for ln in reversed(lines[:start]) if ln.new_no is not None),
                     None)
        for j, line in enumerate(run):
            match = _ALIAS_RE.match(line.text)
            if match is None or line.old_no is None or above is None:
                continue
            own = indent_width(line.text)
            if any(r.text.lstrip().startswith("- ") and indent_width(r.text) < own for r in run):
                continue  # the whole case goes: the list-item reading names it
            name, key = match.group("name"), match.group("key") or ""
            if key in ("", "<<"):  # merged into the key above: `benchmarks:` / `<<: *x`
                key = next((m.group("key") for r in reversed(run[:j])
                            if (m := _KEY_RE.match(r.text)) and indent_width(r.text) < own), key)
            uses = rf"\*{re.escape(name)}\b"
            if len(re.findall(uses, head)) >= len(re.findall(uses, "\n".join(base.values()))):
                continue  # still referred to as often: moved within the file
            if not _gated(base, name):
                continue
            where = _case(base, line.old_no, own) or key or "list"
            yield where, f"{key}: *{name}" if key and key != "<<" else f"*{name}", above
