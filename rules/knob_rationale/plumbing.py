"""Optional-override plumbing: a knob forwarded from a variable, not a value retuned.

A CI script gains `MAX_MODEL_LEN="${MAX_MODEL_LEN:-}"` and passes
`--max-model-len "$MAX_MODEL_LEN"` only when it is set; a workflow gains a
`workflow_dispatch` input with `default: ''` forwarded as
`${X:+--benchmark-concurrency "$X"}`. A default run changes nothing: the value lives
wherever the variable is set, and a retune would show there. The same holds when a
flag's literal value is replaced by a variable whose default is that same value, or when
one variable is swapped for another (a refactor into a helper's parameter).
"""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import Change
from rules.analysis.knobs.values import same_value

_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,80}"
# A whole value that only names a variable: `$X`, `${X}`, `${X:-}` / `${X-}` (empty
# default), `${X[@]}`, a GitHub expression with no literal fallback (`${{ inputs.x }}`,
# `${{ inputs.x || '' }}`), or nothing at all.
_BARE_REF_RE = re.compile(
    rf"\$(?:{_NAME}|\{{{_NAME}(?:\[[@*]\])?(?::?-)?\}})"
    r"|\$\{\{\s*[\w.\[\]'\"-]{1,120}(?:\s*\|\|\s*(?:''|\"\"))?\s*\}\}"
)
_VAR_RE = re.compile(rf"\$\{{?({_NAME})")
_FALLBACK_RE = re.compile(rf"\$\{{{_NAME}:?-([^}}\s$]{{1,80}})\}}")


def _unquoted(value: str) -> str:
    return value.strip().strip("\"'").strip()


def bare_reference(value: str) -> bool:
    """Whether the value is only a variable reference with no default of its own."""
    text = _unquoted(value)
    return not text or _BARE_REF_RE.fullmatch(text) is not None


def _default_of(name: str, text: str) -> str | None:
    """The default the head file gives variable `name`: `NAME="${NAME:-D}"`, `NAME=D`,
    `local NAME="${2:-D}"`, or an env mapping's `NAME: D`; None when not found once."""
    pattern = re.compile(
        rf"(?m)^[ \t]*(?:export[ \t]+|local[ \t]+|readonly[ \t]+)?{re.escape(name)}"
        r"(?:=|:[ \t]+)(\S{1,200})")
    found = {m.group(1) for m in pattern.finditer(text[:400_000])}
    if len(found) != 1:
        return None
    value = _unquoted(found.pop())
    fallback = _FALLBACK_RE.fullmatch(value)
    if fallback is not None:
        return fallback.group(1).strip("\"'")
    return None if "$" in value else value


def _lifted_default(changed: ChangedFile, change: Change) -> bool:
    """`MAX_NUM_SEQS="${MAX_NUM_SEQS:-256}"` added where the PR removes the same knob
    passed as a literal (`--max-num-seqs 256`): the default moved into a variable."""
    new = change.new
    if change.old is None and new is not None:
        fallback = _FALLBACK_RE.fullmatch(_unquoted(new.value))
        base = "\n".join(line.text for line in changed.removed_lines)
        if fallback is not None and base:
            flag = new.name.replace("_", "-")
            pattern = re.compile(rf"--{re.escape(flag)}[= ]+[\"']?([^\s\"'\\]+)")
            found = {m.group(1) for m in pattern.finditer(base[:400_000])}
            return bool(found) and all(same_value(v, fallback.group(1)) for v in found)
    return False


def forwarded_only(changed: ChangedFile, change: Change) -> bool:
    """Whether the change only routes a knob through a variable: no value a default
    run uses is set or changed here."""
    new, old = change.new, change.old
    if _lifted_default(changed, change):
        return True
    if new is None or not bare_reference(new.value):
        return False
    if old is None or bare_reference(old.value):
        return True  # new plumbing, or one variable swapped for another
    var = _VAR_RE.search(_unquoted(new.value))
    if var is None:
        return False
    head = changed.head_text
    if head is None:
        head = "\n".join(changed.patch_head_lines.values())
    default = _default_of(var.group(1), head)
    return default is not None and same_value(default, old.value)


def with_known_old(changed: ChangedFile, change: Change) -> Change | None:
    """The change with an old value that was only a variable reference (`$MAX_LEN`,
    `${{ vars.TIMEOUT }}`) replaced by the default the base file gives it; None when
    that default is unknown (a repository variable, an input) or equals the new value.

    "`${{ vars.X }}` → 300" tells a reviewer nothing: what ran before lives elsewhere.
    """
    old, new = change.old, change.new
    if old is None or new is None or not bare_reference(old.value):
        return change
    var = _VAR_RE.search(_unquoted(old.value))
    base = changed.base_text
    if base is None:
        base = "\n".join(line.text for hunk in changed.hunks for line in hunk.lines
                         if line.old_no is not None)
    default = _default_of(var.group(1), base) if var is not None else None
    if default is None or same_value(default, new.value):
        return None
    return Change(old._replace(value=default, literal=True), new)
