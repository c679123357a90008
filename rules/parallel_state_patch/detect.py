"""What a test statement patches: private parallel-state globals and faked group accessors."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

ACCESSORS = (r"get_(?:tp|pp|dp|ep|world|moe_ep|moe_tp|attn_tp|attention_tp|tensor_model_parallel"
             r"|pipeline_model_parallel)_group|get_parallel")
_PRIVATE = r"_[A-Z][A-Z0-9_]*"
# `from pkg import parallel_state [as ps]`, `import pkg.jax_parallel_state [as jps]`
_IMPORT_AS_RE = re.compile(
    r"^\s*(?:from\s+[\w.]+\s+import\s+(\w*parallel_state)|import\s+[\w.]*?(\w*parallel_state))"
    r"(?:\s+as\s+(\w+))?")
_ASSIGN_RE = re.compile(rf"(?<![\w.])([\w.]+)\.({_PRIVATE}|{ACCESSORS})\s*=(?!=)\s*(.*)")
PATCH_STR_RE = re.compile(
    r"\b(patch|setattr)\(\s*(?:target\s*=\s*)?[\"']([\w.]{1,300})[\"']\s*(.*)")
_NAME_RE = re.compile(rf"^(?:{_PRIVATE}|{ACCESSORS})$")
_PATCH_OBJ_RE = re.compile(
    rf"\b(patch\.object|setattr)\(\s*([\w.]+)\s*,\s*[\"']({_PRIVATE}|{ACCESSORS})[\"']\s*(.*)")
_FAKE_RE = re.compile(
    r"\b(MagicMock|NonCallableMagicMock|NonCallableMock|AsyncMock|Mock|SimpleNamespace|"
    r"create_autospec)\s*\(([^()]{0,80})\)?")
_ACCESSOR_RE = re.compile(rf"^(?:{ACCESSORS})$")
# Module names that stand for parallel_state when its import is not visible.
_LIKELY_ALIASES = ("parallel_state", "ps", "pstate", "dist_ps", "parallel")
_MAX_STATEMENT = 30


@dataclass(frozen=True)
class Patch:
    target: str  # `parallel_state._MOE_EP`, `get_tp_group`
    fake: str  # what it is replaced with, "" when unknown
    accessor: bool
    module: str = ""  # last component of the module patched (`parallel_state`), "" unknown


def aliases(lines: Mapping[int, str]) -> dict[str, str]:
    """Names that stand for a parallel-state module in this file -> that module's name."""
    found = {alias: "parallel_state" for alias in _LIKELY_ALIASES}
    for text in lines.values():
        if "parallel_state" in text and "import" in text:
            match = _IMPORT_AS_RE.match(text)
            if match:
                module = match.group(1) or match.group(2)
                found[match.group(3) or module] = module
    return found


def _module_of(owner: str, names: Mapping[str, str]) -> str:
    return names.get(owner) or owner.rpartition(".")[2]


def detect(statement: str, names: Mapping[str, str]) -> Patch | None:
    for match in PATCH_STR_RE.finditer(statement):
        module, _, name = match.group(2).rpartition(".")
        rest = match.group(3)
        if not _NAME_RE.match(name):
            continue
        where = module.rpartition(".")[2]
        if _ACCESSOR_RE.match(name):
            fake = _fake(rest, bare_patch=match.group(1) == "patch")
            if fake is not None:
                return Patch(name, fake, True, where)
        elif module.endswith("parallel_state"):
            return Patch(f"parallel_state.{name}", _fake(rest, False) or "", False, where)
    for match in _PATCH_OBJ_RE.finditer(statement):
        owner, name, rest = match.group(2), match.group(3), match.group(4)
        where = _module_of(owner, names)
        if _ACCESSOR_RE.match(name):
            fake = _fake(rest, bare_patch=match.group(1) == "patch.object")
            if fake is not None:
                return Patch(name, fake, True, where)
        elif owner in names or owner.endswith("parallel_state"):
            return Patch(f"parallel_state.{name}", _fake(rest, False) or "", False, where)
    for match in _ASSIGN_RE.finditer(statement):
        owner, name, value = match.group(1), match.group(2), match.group(3)
        where = _module_of(owner, names)
        if _ACCESSOR_RE.match(name):
            fake = _fake(value, False)
            if fake:
                return Patch(name, fake, True, where)
        elif owner in names or owner.endswith("parallel_state"):
            return Patch(f"parallel_state.{name}", _short(value), False, where)
    return None


def _fake(rest: str, bare_patch: bool) -> str | None:
    """What an accessor is replaced with when it is a fake; None when it is not."""
    match = _FAKE_RE.search(rest)
    if match:
        args = match.group(2) if match.group(2) is not None else "…"
        shown = f"{match.group(1)}({args})"
        return shown if len(shown) <= 60 else match.group(1) + "(…)"
    if bare_patch and not re.search(r"\b(?:new|return_value|side_effect|wraps)\s*=", rest) and (
            rest.startswith(")") or not rest.startswith(",")):
        return "a MagicMock"  # `patch(target)` alone installs a MagicMock
    return None


def _short(value: str) -> str:
    value = value.strip()
    if value.endswith(")") and value.count(")") > value.count("("):
        value = value[:-1].rstrip()  # the closing bracket of an enclosing call
    return value if len(value) <= 60 else value[:59] + "…"


def _code(text: str) -> str:
    """The line without its comment and string contents (for bracket counting)."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def statements(lines: Mapping[int, str]) -> Iterator[tuple[int, int]]:
    """(first, last) line of each logical statement, joined across open brackets."""
    start = 0
    depth = 0
    previous = -1
    for number in sorted(lines):
        if number != previous + 1 and depth:
            yield start, previous  # a gap in a partial view ends the statement
            depth = 0
        previous = number
        if depth == 0:
            start = number
        code = _code(lines[number])
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        if depth <= 0 or number - start >= _MAX_STATEMENT:
            yield start, number
            depth = 0
    if depth:
        yield start, previous
