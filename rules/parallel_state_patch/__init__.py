"""parallel-state-patch: tests that patch private parallel-state globals or fake group accessors."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.lines import known_lines, openers
from rules.analysis.literals import any_of
from rules.analysis.siblings import sibling_texts
from rules.base import Rule, RuleContext

_TRIGGERS = ("parallel_state", "get_parallel", "_group", "Mock", "SimpleNamespace",
             "return_value", "patch", "setattr", "lambda", "_TP", "_EP", "_PP", "_DP")
_ANY_TRIGGER = any_of(_TRIGGERS)  # asked of every test file's added text
_ACCESSORS = (r"get_(?:tp|pp|dp|ep|world|moe_ep|moe_tp|attn_tp|attention_tp|tensor_model_parallel"
              r"|pipeline_model_parallel)_group|get_parallel")
_PRIVATE = r"_[A-Z][A-Z0-9_]*"
_IMPORT_AS_RE = re.compile(
    r"^\s*(?:from\s+[\w.]+\s+import\s+parallel_state|import\s+[\w.]*parallel_state)"
    r"(?:\s+as\s+(\w+))?")
_ASSIGN_RE = re.compile(rf"(?<![\w.])([\w.]+)\.({_PRIVATE}|{_ACCESSORS})\s*=(?!=)\s*(.*)")
_PATCH_STR_RE = re.compile(
    r"\b(patch|setattr)\(\s*(?:target\s*=\s*)?[\"']([\w.]{1,300})[\"']\s*(.*)")
_NAME_RE = re.compile(rf"^(?:{_PRIVATE}|{_ACCESSORS})$")
_PATCH_OBJ_RE = re.compile(
    rf"\b(patch\.object|setattr)\(\s*([\w.]+)\s*,\s*[\"']({_PRIVATE}|{_ACCESSORS})[\"']\s*(.*)")
_FAKE_RE = re.compile(
    r"\b(MagicMock|NonCallableMagicMock|NonCallableMock|AsyncMock|Mock|SimpleNamespace|"
    r"create_autospec)\s*\(([^()]{0,80})\)?")
_ACCESSOR_RE = re.compile(rf"^(?:{_ACCESSORS})$")
_OVERRIDE_RE = re.compile(r"(?<![\w.])[\w.]*\(\)\.override\([^()]{0,120}\)|\.override\(")
_DEF_RE = re.compile(r"^\s*(?:async\s+)?(def|class)\s+(\w+)\s*(\([^)]{0,300}\)?)?")
# Module names that stand for parallel_state when its import is not visible.
_LIKELY_ALIASES = ("parallel_state", "ps", "pstate", "dist_ps", "parallel")
_SETUP_NAMES = frozenset({"setUp", "setUpClass", "asyncSetUp", "setup_method", "setup_class"})
_MAX_STATEMENT = 30


@dataclass(frozen=True)
class _Patch:
    target: str  # `parallel_state._MOE_EP`, `get_tp_group`
    fake: str  # what it is replaced with, "" when unknown
    accessor: bool


class ParallelStatePatch(Rule):
    """Tests should use the public parallel-state override, not patch private globals.

    Why it destabilizes CI
    ----------------------
    Tests that assign `parallel_state._MOE_EP = SimpleNamespace(world_size=1)`, patch
    `parallel_state._TP`, or make `get_tp_group()` return a `MagicMock` pin a fake to
    an implementation detail: the test keeps passing while the code under test reads a
    different group, and breaks (or worse, leaks the fake into later tests) when
    parallel_state is refactored. In the SGLang Xeon CI fix, review rejected exactly
    this patch for `test_deepseek_v4_shared_expert_fusion.py`: the V4 fusion gate does
    not read EP at all, and `setUp()` already applied
    `get_parallel().override(moe_ep_size=1)` for every test, so the patch only hid the
    real dependency and was reverted.

    Flags
    -----
    ```python
    parallel_state._MOE_EP = SimpleNamespace(world_size=1)
    with mock.patch.object(parallel_state, "_EP", SimpleNamespace(world_size=1)): ...
    monkeypatch.setattr(parallel_state, "get_tp_group", lambda: MagicMock())
    ```

    Prefer
    ------
    ```python
    def setUp(self):
        self._parallel = get_parallel().override(moe_ep_size=1)
        self._parallel.__enter__()
    ```
    """

    id = "parallel-state-patch"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, Any]] = {
        "hint": ("Use the public override instead, e.g. "
                 "`with get_parallel().override(moe_ep_size=1):` (or apply it once in "
                 "`setUp()`), so the test states the parallel setting it depends on."),
    }

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        hint = str(ctx.option("hint")).strip()
        for changed in ctx.files("test", "cpu-test"):
            if not changed.path.endswith(".py") or not _ANY_TRIGGER(changed.added_text):
                continue
            for finding in self._check_file(changed, hint):
                if not _sibling_idiom(ctx.snapshot, changed.path, finding.key or ""):
                    yield finding

    def _check_file(self, changed: ChangedFile, hint: str) -> Iterator[Finding]:
        lines = known_lines(changed)
        added = changed.added_line_numbers
        aliases = set(_LIKELY_ALIASES)
        for text in lines.values():
            if "parallel_state" in text and "import" in text:
                match = _IMPORT_AS_RE.match(text)
                if match:
                    aliases.add(match.group(1) or "parallel_state")
        overrides: list[tuple[int, str, int, str]] | None = None
        for start, end in _statements(lines):
            touched = [n for n in range(start, end + 1) if n in added]
            if not touched:
                continue
            statement = " ".join(lines[n].strip() for n in range(start, end + 1) if n in lines)
            if ".override(" in statement:
                continue
            patch = _detect(statement, aliases)
            if patch is None:
                continue
            if overrides is None:
                overrides = _overrides(lines)
            line = start if start in added else touched[0]
            yield self._finding(changed, lines, line, start, patch, overrides, hint, statement)

    def _finding(self, changed: ChangedFile, lines: Mapping[int, str], line: int, start: int,
                 patch: _Patch, overrides: list[tuple[int, str, int, str]], hint: str,
                 statement: str) -> Finding:
        fake = f" with `{patch.fake}`" if patch.fake else ""
        if patch.accessor:
            what = (f"This test replaces `{patch.target}`{fake}: a fake group hides which "
                    "parallel setting the code under test really reads")
        else:
            what = (f"This test patches the private `{patch.target}`{fake}: it pins the test to "
                    "an implementation detail and hides which parallel setting the code really "
                    "reads")
        redundant = _redundant_with(lines, start, overrides)
        if redundant is not None:
            number, name, override = redundant
            message = (f"{what}. It is also redundant: `{name}()` (line {number}) already applies "
                       f"`{override}` for every test, so drop the patch.")
        else:
            message = f"{what}. {hint}"
        key = re.sub(r"\s+", " ", statement)[:300]
        return self.finding(message, file=changed, line=line, key=key)


def _sibling_idiom(snapshot: PullRequestSnapshot, path: str, statement: str) -> bool:
    """Most sibling tests patch the same target: the repository's idiom, not this PR's."""
    target = _PATCH_STR_RE.search(statement)
    texts = sibling_texts(snapshot, path) if target is not None else None
    if target is None or not texts:
        return False
    quoted = (f'"{target.group(2)}"', f"'{target.group(2)}'")
    same = sum(any(q in text for q in quoted) for text in texts)
    return same >= 2 and 2 * same >= len(texts)


def _detect(statement: str, aliases: set[str]) -> _Patch | None:
    for match in _PATCH_STR_RE.finditer(statement):
        module, _, name = match.group(2).rpartition(".")
        rest = match.group(3)
        if not _NAME_RE.match(name):
            continue
        if _ACCESSOR_RE.match(name):
            fake = _fake(rest, bare_patch=match.group(1) == "patch")
            if fake is not None:
                return _Patch(name, fake, True)
        elif module.endswith("parallel_state"):
            return _Patch(f"parallel_state.{name}", _fake(rest, False) or "", False)
    for match in _PATCH_OBJ_RE.finditer(statement):
        owner, name, rest = match.group(2), match.group(3), match.group(4)
        if _ACCESSOR_RE.match(name):
            fake = _fake(rest, bare_patch=match.group(1) == "patch.object")
            if fake is not None:
                return _Patch(name, fake, True)
        elif owner in aliases or owner.endswith("parallel_state"):
            return _Patch(f"parallel_state.{name}", _fake(rest, False) or "", False)
    for match in _ASSIGN_RE.finditer(statement):
        owner, name, value = match.group(1), match.group(2), match.group(3)
        if _ACCESSOR_RE.match(name):
            fake = _fake(value, False)
            if fake:
                return _Patch(name, fake, True)
        elif owner in aliases or owner.endswith("parallel_state"):
            return _Patch(f"parallel_state.{name}", _short(value), False)
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


def _statements(lines: Mapping[int, str]) -> Iterator[tuple[int, int]]:
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


def _enclosing(lines: Mapping[int, str], number: int) -> list[tuple[str, str, int, str]]:
    """Enclosing def/class of a line, innermost first: (kind, name, line, signature)."""
    return [(match.group(1), match.group(2), back, match.group(3) or "")
            for back, text in openers(lines, number, 3000) if (match := _DEF_RE.match(text))]


def _overrides(lines: Mapping[int, str]) -> list[tuple[int, str, int, str]]:
    """(def line, def name, class line or 0, override text) for setUp/fixtures applying one."""
    found: list[tuple[int, str, int, str]] = []
    for number, text in lines.items():
        if ".override(" not in text:
            continue
        chain = _enclosing(lines, number)
        defs = [c for c in chain if c[0] == "def"]
        if not defs:
            continue
        _, name, at, _ = defs[0]
        decorators = " ".join(lines.get(n, "") for n in range(max(1, at - 4), at))
        fixture = "fixture" in decorators
        if name not in _SETUP_NAMES and not fixture:
            continue
        if fixture and "autouse" not in decorators:
            name = f"fixture:{name}"
        klass = next((c[2] for c in chain if c[0] == "class"), 0)
        match = _OVERRIDE_RE.search(text)
        override = match.group(0) if match and match.group(0) != ".override(" else \
            "get_parallel().override(...)"
        found.append((at, name, klass, override))
    return found


def _redundant_with(lines: Mapping[int, str], number: int,
                    overrides: list[tuple[int, str, int, str]]) -> tuple[int, str, str] | None:
    if not overrides:
        return None
    chain = _enclosing(lines, number)
    klass = next((c[2] for c in chain if c[0] == "class"), 0)
    test_sig = next((c[3] for c in chain if c[0] == "def"), "")
    for at, name, override_class, override in overrides:
        if name.startswith("fixture:"):
            fixture = name.split(":", 1)[1]
            if re.search(rf"\b{re.escape(fixture)}\b", test_sig):
                return at, fixture, override
            continue
        if name in _SETUP_NAMES and override_class != klass:
            continue
        return at, name, override
    return None
