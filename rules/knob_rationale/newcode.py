"""Knobs added with new code, or added the way their neighbours already have them.

Three readings of a knob that had no value before (`old is None`), none a retune:

- A parameter the PR adds to a function signature (`def run_bench(…, max_concurrency=256,`):
  its default is the new parameter's, not a CI setting moved to another value.
- A value the PR gives its new code: a variable or matrix key unknown to the file before
  the PR, which the PR's own new block reads (`local wait_timeout=30` counted down by a new
  `while` loop; `mtp_accept_threshold: 0.74` in a matrix, read by a new check step). The
  value belongs to the feature or check that reads it; an existing step or block that
  starts reading a new variable is still asked about.
- A value the same knob already has everywhere else in its function (a new `elif` branch
  with the `max_model_len=4096` the other branches use, a reference `LLM(…)` given the
  `max_num_seqs=4` the compared one has): repeating it decides nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import KnobFilter, Setting, extract
from rules.analysis.knobs.values import same_value
from rules.analysis.lines import indent_width, known_lines, openers
from rules.analysis.memo import memoized

_SHELL = (".sh", ".bash")
_YAML = (".yml", ".yaml")
_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\(")
_SHELL_FUNCTION_RE = re.compile(
    r"^\s*(?:function\s+[A-Za-z_][\w:.-]*\s*(?:\(\s*\))?|[A-Za-z_][\w:.-]*\s*\(\s*\))\s*\{?\s*$")
_SHELL_BLOCK_RE = re.compile(r"^\s*(?:if|elif|else|for|while|until|case)\b")
_MAX_WALK = 400
_MAX_SPAN = 600
_MAX_BASE = 400_000


@memoized
def _added(changed: ChangedFile) -> frozenset[int]:
    return changed.added_line_numbers


def _depth(text: str) -> int:
    code = text.split("#", 1)[0]
    return code.count("(") - code.count(")")


def new_parameter(changed: ChangedFile, setting: Setting) -> bool:
    """Whether an added Python line holding the setting is a parameter of a `def`
    signature (the setting's line lies between `def name(` and the `)` closing it)."""
    if not changed.path.endswith((".py", ".pyi")) or setting.line not in _added(changed):
        return False
    head = known_lines(changed)
    own = head.get(setting.line, "")
    if _DEF_RE.match(own):
        return setting.raw in own.split("(", 1)[1]
    for n, text in openers(head, setting.line, _MAX_WALK):
        if not _DEF_RE.match(text):
            continue
        depth = 0
        for k in range(n, setting.line):
            depth += _depth(head.get(k, ""))
            if depth <= 0:
                return False  # the signature closed above: the setting is in the body
        return True
    return False


def _spellings(raw: str) -> set[str]:
    return {raw, raw.replace("-", "_"), raw.replace("_", "-")}


def _reference_re(raw: str) -> re.Pattern[str]:
    names = "|".join(re.escape(s) for s in sorted(_spellings(raw)))
    # A bare name anywhere in shell arithmetic (`$((attempt * x))`, `(( i < x-1 ))`)
    # is read without `$`, and `-` there is a minus.
    bare = re.escape(raw.replace("-", "_"))
    arithmetic = rf"\(\((?:[^()\n]|\([^()\n]*\))*?(?<![\w$]){bare}(?!\w)"
    # `$x`, `${x}`, `${x:-…}`, `matrix.x`, `inputs.x`, `env.x`
    return re.compile(rf"(?:\$\{{?|\b(?:matrix|inputs|env)\.)(?:{names})(?![\w-])|{arithmetic}")


def read_by_new_code(changed: ChangedFile, setting: Setting) -> bool:
    """Whether a shell or workflow knob unknown to the file's base is read by a block the
    PR adds: an added line references it and that line's enclosing block opens on an
    added line (a new branch, loop, step or function)."""
    if not changed.path.endswith(_SHELL + _YAML):
        return False
    base = changed.base_text
    if base is None:  # the patch's base side: removed and context lines
        base = "\n".join(line.text for hunk in changed.hunks for line in hunk.lines
                         if line.old_no is not None)
    spelled = _spellings(setting.raw)
    known = re.compile("|".join(rf"(?<![\w-]){re.escape(s)}(?![\w-])" for s in sorted(spelled)))
    if known.search(base[:_MAX_BASE]):
        return False
    head = known_lines(changed)
    added = _added(changed)
    reference = _reference_re(setting.raw)
    for line in changed.added_lines:
        n = line.new_no
        if n is None or n in setting.lines or not reference.search(line.text[:2000]):
            continue
        unit = _unit(head, n, changed.path.endswith(_YAML))
        if unit is not None and unit in added:
            return True
    return False


def _unit(head: Mapping[int, str], number: int, yaml: bool) -> int | None:
    """The line opening the unit around a line: a workflow's list item (a step), or a
    shell block (a branch, loop or function). A key like `env:` is not a unit: a step
    that gains one is still the old step."""
    if yaml and head.get(number, "").lstrip().startswith("- "):
        return number  # a one-line step (`- run: ./check.sh ${{ matrix.x }}`)
    for n, text in openers(head, number, _MAX_WALK):
        if (text.lstrip().startswith("- ") if yaml else
                _SHELL_BLOCK_RE.match(text) or _SHELL_FUNCTION_RE.match(text)):
            return n
    return None


def _span(head: Mapping[int, str], opener: int) -> range:
    """The head lines of the block that `opener` opens (by indentation)."""
    indent = indent_width(head.get(opener, ""))
    end = opener + 1
    while end in head and end - opener < _MAX_SPAN:
        text = head[end]
        if text.strip() and indent_width(text) <= indent and not text.strip().startswith(")"):
            break
        end += 1
    return range(opener, end)


def _function(changed: ChangedFile, head: Mapping[int, str], number: int) -> int | None:
    shell = changed.path.endswith(_SHELL)
    pattern = _SHELL_FUNCTION_RE if shell else _DEF_RE
    for n, text in openers(head, number, _MAX_WALK):
        if pattern.match(text):
            return n
        if text.strip().startswith(")"):  # `):` closing a signature that spans lines
            return _signature_start(head, n)
    return None


def _signature_start(head: Mapping[int, str], closing: int) -> int | None:
    indent = indent_width(head[closing])
    for n in range(closing - 1, max(0, closing - _MAX_WALK), -1):
        text = head.get(n)
        if text is None:
            return None
        if text.strip() and indent_width(text) <= indent:
            return n if _DEF_RE.match(text) else None
    return None


def repeats_siblings(changed: ChangedFile, setting: Setting) -> bool:
    """Whether the knob's unchanged occurrences in its function all hold this value (at
    least one does): the new occurrence follows them."""
    if not changed.path.endswith((".py", *_SHELL)):
        return False
    head = known_lines(changed)
    opener = _function(changed, head, setting.line)
    if opener is None:
        return False
    added = _added(changed)
    side = [(n, head[n], True) for n in _span(head, opener) if n not in added]
    found = [s for s in extract(side, KnobFilter((setting.name,)), yaml_keys=False,
                                python=not changed.path.endswith(_SHELL), only={setting.name})
             if s.name == setting.name and s.label == setting.label]
    return bool(found) and all(s.literal and same_value(s.value, setting.value) for s in found)
