"""parallel-state-patch: tests that patch private parallel-state globals or fake group accessors."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile
from rules.analysis.lines import known_lines
from rules.analysis.literals import any_of
from rules.base import Rule, RuleContext
from rules.parallel_state_patch.advice import GENERIC_HINT, advice, is_subject
from rules.parallel_state_patch.detect import Patch, aliases, detect, statements
from rules.parallel_state_patch.idiom import ModulesUnderTest, repository_idiom, scoped
from rules.parallel_state_patch.scope import Override, overrides, redundant_with, sibling_idiom

_TRIGGERS = ("parallel_state", "get_parallel", "_group", "Mock", "SimpleNamespace",
             "return_value", "patch", "setattr", "lambda", "_TP", "_EP", "_PP", "_DP")
_ANY_TRIGGER = any_of(_TRIGGERS)  # asked of every test file's added text
_MAX_LISTED = 8


@dataclass(frozen=True)
class _Hit:
    line: int
    patch: Patch
    statement: str
    redundant: tuple[int, str, str] | None


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

    The advice names `get_parallel().override(...)` only where the file, the PR or the
    repository defines `get_parallel`; otherwise a conftest fixture of the repository
    that applies an override, or no API at all. The unit test of a parallel-state module
    itself (`test_parallel_state.py` patching that module's globals and the accessors it
    calls) is not flagged: those are its subject. Repeated patches of one name in a file
    are one finding that lists the lines.

    Where the repository shows no public override to recommend, a unit test that fakes a
    group accessor with a patch undone after the test (`@patch("pkg.mod.get_tp_group")`,
    `with patch(...)`, `monkeypatch.setattr`, `mocker.patch`) is not flagged when it fakes
    the accessor in the namespace of the module the test imports and that module calls it
    (the fake is the group the code reads), or when at least two base-revision unit tests
    near it fake that accessor with scoped patches too (the repository's idiom; see
    `idiom.py`). An assignment, a patch started by hand (`.start()`), a private global,
    or a patch a setUp override already makes redundant is flagged as before.
    """

    id = "parallel-state-patch"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, Any]] = {
        # Empty: the rule recommends what the repository shows it has (see advice.py).
        "hint": "",
    }

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        configured = str(ctx.option("hint")).strip()
        for changed in ctx.files("test", "cpu-test"):
            if not changed.path.endswith(".py") or not _ANY_TRIGGER(changed.added_text):
                continue
            lines = known_lines(changed)
            hits = [hit for hit in _hits(changed, lines)
                    if not sibling_idiom(ctx.snapshot, changed.path, hit.statement)]
            if not hits:
                continue
            hint = configured or advice(ctx.snapshot, changed.path, lines)
            if hint == GENERIC_HINT:  # no public override to recommend instead
                hits = _not_idiom(ctx, changed, lines, hits)
            yield from self._findings(changed, hits, hint)

    def _findings(self, changed: ChangedFile, hits: list[_Hit], hint: str) -> Iterator[Finding]:
        """One finding per patched name (and redundancy) per file, naming every line."""
        groups: dict[tuple[str, tuple[int, str, str] | None], list[_Hit]] = {}
        for hit in hits:
            groups.setdefault((hit.patch.target, hit.redundant), []).append(hit)
        for group in groups.values():
            yield self._finding(changed, group, hint)

    def _finding(self, changed: ChangedFile, group: list[_Hit], hint: str) -> Finding:
        first = group[0]
        patch = first.patch
        same_fake = all(hit.patch.fake == patch.fake for hit in group)
        fake = f" with `{patch.fake}`" if patch.fake and same_fake else ""
        if patch.accessor:
            what = (f"This test replaces `{patch.target}`{fake}: a fake group hides which "
                    "parallel setting the code under test really reads")
        else:
            what = (f"This test patches the private `{patch.target}`{fake}: it pins the test to "
                    "an implementation detail and hides which parallel setting the code really "
                    "reads")
        if len(group) > 1:
            others = [str(hit.line) for hit in group[1:]]
            shown = ", ".join(others[:_MAX_LISTED]) + (", …" if len(others) > _MAX_LISTED else "")
            what += f" (the same patch recurs at line{'s' if len(others) > 1 else ''} {shown})"
        if first.redundant is not None:
            number, name, override = first.redundant
            message = (f"{what}. It is also redundant: `{name}()` (line {number}) already applies "
                       f"`{override}` for every test, so drop the patch.")
        else:
            message = f"{what}. {hint}"
        key = re.sub(r"\s+", " ", first.statement)[:300]
        return self.finding(message, file=changed, line=first.line, key=key)


def _not_idiom(ctx: RuleContext, changed: ChangedFile, lines: Mapping[int, str],
               hits: list[_Hit]) -> list[_Hit]:
    """Drop scoped fakes of an accessor that is the code under test's own dependency, or
    that the unit tests around this one fake the same way (`idiom.py`); a redundant
    patch (an override already applies) is kept."""
    modules = ModulesUnderTest(ctx.snapshot, lines)
    candidates = [hit for hit in hits if hit.patch.accessor and hit.redundant is None
                  and scoped(hit.statement)]
    own = [hit for hit in candidates if modules.reads(hit.statement, hit.patch.target)]
    rest = {hit.patch.target for hit in candidates if hit not in own}
    common = repository_idiom(ctx.snapshot, changed, rest) if rest else frozenset()
    return [hit for hit in hits if hit not in candidates or
            (hit not in own and hit.patch.target not in common)]


def _hits(changed: ChangedFile, lines: Mapping[int, str]) -> Iterator[_Hit]:
    added = changed.added_line_numbers
    names = aliases(lines)
    applied: list[Override] | None = None
    for start, end in statements(lines):
        touched = [n for n in range(start, end + 1) if n in added]
        if not touched:
            continue
        statement = " ".join(lines[n].strip() for n in range(start, end + 1) if n in lines)
        if ".override(" in statement:
            continue
        patch = detect(statement, names)
        if patch is None or is_subject(changed.path, patch.module):
            continue
        if applied is None:
            applied = overrides(lines)
        line = start if start in added else touched[0]
        yield _Hit(line, patch, statement, redundant_with(lines, start, applied))
