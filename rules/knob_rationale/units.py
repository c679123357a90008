"""Brand-new units the shared entry finder does not know: shell functions and top-level
blocks, and named entries of a Python or JSON map.

A CI script gains a test as a new function (`run_llama_quant_test() { … }`) or as a
new block of its own (`# DP2`, an `echo`, the command, `if [ $? -ne 0 ]; then … fi`,
between blank lines), and a model table a model as a new keyed entry
(`"Qwen/Qwen3-8B": "pretrained=…,tp=2"`). The knobs on their lines are the new test's
configuration, not a retune: nothing had another value before. An entry is new when
its opening line is added and no removed line opens one of the same name (then it was
edited or moved, and values compare); a block is new when every line of it is added
where the base had no code (a knob added to an existing command is still asked about),
and its knob is no assignment that later blocks read (`export TP=4`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.core.snapshot import ChangedFile, DiffLine, LineKind
from rules.analysis.knobs import Change, Setting, last_line, readded
from rules.analysis.lines import indent_width, known_lines, openers
from rules.analysis.memo import memoized

_SHELL_SUFFIXES = (".sh", ".bash")
# `name() {`, `function name {`, `function name() {`
_SHELL_FUNCTION_RE = re.compile(
    r"^\s*(?:function\s+([A-Za-z_][\w:.-]*)\s*(?:\(\s*\))?|([A-Za-z_][\w:.-]*)\s*\(\s*\))\s*\{?\s*$")
# `"Qwen/Qwen3-8B": …` (a map keyed by model or case names)
_QUOTED_KEY_RE = re.compile(r"""^\s*(["'])([^"'\n]{1,200})\1\s*:""")
# An element of a list built by a call (`ModelCase("org/b", tp=2),`, `EvalConfig(`).
_CALL_ELEMENT_RE = re.compile(r"^\s*[A-Za-z_][\w.]*\(")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?(?:e-?\d+)?")
_MAX_WALK = 400
_MAX_COMMAND = 4000  # characters of one (continued) command line read
_DECLARE_RE = re.compile(r"(?:export|declare|local|readonly|typeset)\s")
_ASSIGNMENT_RE = re.compile(r"[A-Za-z_]\w*=")


def _function_name(text: str) -> str | None:
    match = _SHELL_FUNCTION_RE.match(text)
    return (match.group(1) or match.group(2)) if match else None


def _entry_key(text: str) -> str | None:
    match = _QUOTED_KEY_RE.match(text)
    return match.group(2) if match else None


@memoized
def added_numbers(changed: ChangedFile) -> frozenset[int]:
    """The head line numbers the PR adds to the file."""
    return frozenset(n for line in changed.added_lines if (n := line.new_no) is not None)


@memoized
def _removed_names(changed: ChangedFile) -> frozenset[str]:
    names = set()
    for line in changed.removed_lines:
        name = _function_name(line.text) or _entry_key(line.text)
        if name is not None:
            names.add(name)
    return frozenset(names)


def in_new_unit(changed: ChangedFile, setting: Setting) -> bool:
    """Whether a head setting belongs to a shell function or keyed entry added whole."""
    path = changed.path
    if path.endswith(_SHELL_SUFFIXES):
        return _in_new_function(changed, setting.line) or _in_new_block(changed, setting.line)
    if path.endswith((".py", ".json")):
        return _in_new_keyed_entry(changed, setting) or (
            path.endswith(".py") and _in_new_call_element(changed, setting.line))
    return False


def _in_new_function(changed: ChangedFile, number: int) -> bool:
    head = known_lines(changed)
    for n, text in openers(head, number, _MAX_WALK):
        name = _function_name(text)
        if name is not None:
            return n in added_numbers(changed) and name not in _removed_names(changed)
    return False


def _in_new_block(changed: ChangedFile, number: int) -> bool:
    """A line of a new top-level block of a shell script: the lines between two blank
    lines (or the file's ends) are all added, the first at column 0, outside any
    function, with no code removed in their place."""
    head = known_lines(changed)
    if _owner(head, number):
        return False  # a function's line: new only with its function
    first, last = number, number
    while (text := head.get(first - 1)) is not None and text.strip():
        first -= 1
    while (text := head.get(last + 1)) is not None and text.strip():
        last += 1
    if (first > 1 and head.get(first - 1) is None) or (
            head.get(last + 1) is None and not last_line(changed, last)):
        return False  # the block may go on past what the patch shows
    added = added_numbers(changed)
    if indent_width(head[first]) or any(n not in added for n in range(first, last + 1)):
        return False
    return not _persistent(head, number) and inserted(changed, first, last)


def _persistent(head: Mapping[int, str], number: int) -> bool:
    """Whether the command line holding `number` only assigns variables (`TP=4`,
    `export TP=4`): the script's later commands read them, it is no block's own."""
    start = number
    while start > 1 and head.get(start - 1, "").rstrip().endswith("\\"):
        start -= 1
    parts: list[str] = []
    n = start
    while n in head and len(parts) < 50:
        parts.append(head[n].rstrip().removesuffix("\\"))
        if not head[n].rstrip().endswith("\\"):
            break
        n += 1
    text = " ".join(parts)[:_MAX_COMMAND].strip()
    if _DECLARE_RE.match(text):
        return True
    at = 0
    while at < len(text):
        match = _ASSIGNMENT_RE.match(text, at)
        if match is None:
            return False  # a command: the assignments before it are its environment
        at = _value_end(text, match.end())
        while at < len(text) and text[at].isspace():
            at += 1
    return bool(text)


def _value_end(text: str, at: int) -> int:
    """Where a shell word starting at `at` ends (quotes kept whole)."""
    while at < len(text) and not text[at].isspace():
        if text[at] in "\"'":
            close = text.find(text[at], at + 1)
            at = len(text) if close < 0 else close + 1
        else:
            at += 1
    return at


def inserted(changed: ChangedFile, first: int, last: int) -> bool:
    """Whether the diff's runs holding head lines `first`..`last` remove nothing but
    blank and comment lines, and lines they add back unchanged (the old last line of a
    file that had no newline at its end): the block was inserted, not rewritten from
    code."""
    for hunk in changed.hunks:
        if not hunk.new_start <= first <= last < hunk.new_start + hunk.new_count:
            continue
        kept = readded(hunk)
        run: list[DiffLine] = []
        for line in (*hunk.lines, None):
            if line is not None and line.kind is not LineKind.CONTEXT:
                run.append(line)
                continue
            if any(first <= (d.new_no or 0) <= last for d in run) and any(
                    d.kind is LineKind.REMOVED and d.text.strip() and d.old_no not in kept
                    and not d.text.lstrip().startswith("#") for d in run):
                return False
            run = []
        return True
    return False


def _in_new_keyed_entry(changed: ChangedFile, setting: Setting) -> bool:
    """A setting inside the value of a new `"name": …` entry that has keyed siblings."""
    head = known_lines(changed)
    number = setting.line
    candidates = [(number, head.get(number, "")),
                  *openers(head, number, _MAX_WALK)]
    for n, text in candidates[:2]:  # the setting's own line, or the entry it continues
        key = _entry_key(text)
        if key is None or key.lower().replace("_", "-") == setting.name:
            continue
        return (n in added_numbers(changed) and key not in _removed_names(changed)
                and _has_keyed_sibling(head, n))
    return False


def _in_new_call_element(changed: ChangedFile, number: int) -> bool:
    """A setting in a new element of a list that is built by a call: the element's
    line is added, it sits directly in a `[` list, and no removed line is the same
    element with other values (then it was retuned, and values compare)."""
    head = known_lines(changed)
    chain = [(number, head.get(number, "")), *openers(head, number, _MAX_WALK)]
    for k, (n, text) in enumerate(chain[:2]):
        if not _CALL_ELEMENT_RE.match(text):
            continue
        if k + 1 < len(chain):
            if not chain[k + 1][1].split("#", 1)[0].rstrip().endswith("["):
                return False
        elif not _same_call_sibling(head, n, text):
            return False  # the container is not in the patch: an existing sibling tells
        return n in added_numbers(changed) and (
            _element_identity(text) not in _removed_elements(changed))
    return False


def _same_call_sibling(head: Mapping[int, str], number: int, text: str) -> bool:
    """Another element built by the same call at the same indentation, above or below,
    or the `),` that ends the element above."""
    callee = text.strip().split("(", 1)[0] + "("
    indent = indent_width(text)
    for step in (-1, 1):
        n = number + step
        while n in head and abs(n - number) < _MAX_WALK:
            line = head[n]
            n += step
            if line.strip() and indent_width(line) < indent:
                break
            if indent_width(line) == indent and (line.strip().startswith(callee)
                                            or (step < 0 and line.strip() == "),")):
                return True  # the same call, or the end of the element above (`),`)
    return False


def _element_identity(text: str) -> str:
    """An element by its call and first argument (`ModelCase("org/c"`): the same entry
    with a value changed or a keyword added is no new entry."""
    return _NUMBER_RE.sub("", text.split(",", 1)[0]).strip()


@memoized
def _removed_elements(changed: ChangedFile) -> frozenset[str]:
    return frozenset(_element_identity(line.text) for line in changed.removed_lines
                     if _CALL_ELEMENT_RE.match(line.text))


def _has_keyed_sibling(head: Mapping[int, str], number: int) -> bool:
    """Another quoted key at the same indentation next to this one: a map of entries."""
    indent = indent_width(head[number])
    for step in (-1, 1):
        n = number + step
        while n in head and abs(n - number) < _MAX_WALK:
            text = head[n]
            n += step
            if not text.strip():
                continue
            width = indent_width(text)
            if width < indent:
                break
            if width == indent and _entry_key(text) is not None:
                return True
    return False


def split_across_functions(changed: ChangedFile, changes: Sequence[Change]) -> list[Change]:
    """Shell scripts: a pair whose values lie in two different functions is split (the
    diff lined up a removed test's value with a new test's)."""
    if not changed.path.endswith(_SHELL_SUFFIXES):
        return list(changes)
    out: list[Change] = []
    for change in changes:
        old, new = change
        if old is not None and new is not None:
            before = _owner(_base_lines(changed), old.line)
            after = _owner(known_lines(changed), new.line)
            if before and after and before != after:
                out += [Change(old, None), Change(None, new)]
                continue
        out.append(change)
    return out


def _owner(lines: Mapping[int, str], number: int) -> str:
    for _, text in openers(lines, number, _MAX_WALK):
        name = _function_name(text)
        if name is not None:
            return name
    return ""


@memoized
def _base_lines(changed: ChangedFile) -> Mapping[int, str]:
    full = changed.base_lines
    if full is not None:
        return dict(enumerate(full, start=1))
    return changed.patch_base_lines  # shared, read-only
