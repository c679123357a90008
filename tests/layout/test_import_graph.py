"""The layout holds: no import circles, no upward imports between wings, no hidden
(function-local) imports of our own modules, small modules, no grab-bag names.

Walks the source with `ast` only, so it checks what is written, not what happens to
be importable.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import yaml

from bot.app.events import HANDLED_ACTIONS, IMPLICIT_EVENTS, SUBSCRIBED_EVENTS
from bot.app.routes import HANDLERS

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "rules")
MAX_LINES = 300
# Wings that must not import the composition roots or the rule pack.
LOWER_WINGS = ("bot.core", "bot.sources", "bot.render", "bot.github", "bot.store", "bot.advisor",
               "bot.evidence", "bot.errors")
COMPOSITION_ROOTS = ("bot.app", "bot.cli")
LAZY_COMMENT = "Deliberately lazy"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    # `from pkg import mod` imports the module `pkg.mod` when there is one.
    out = []
    for alias in node.names:
        full = f"{target}.{alias.name}"
        out.append(full if full in MODULES else target)
    return out


def _ours(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> Iterator[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for each import of our own modules."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    local: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    local.add(id(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(node, module, is_package):
                resolved = _resolve(target) if _ours(target) else None
                if resolved is not None and resolved != module:
                    yield resolved, node.lineno, id(node) in local


GRAPH: dict[str, set[str]] = {
    module: {target for target, _, _ in _imports(module, path)}
    for module, path in MODULES.items()
}


def _in(module: str, wings: tuple[str, ...]) -> bool:
    return any(module == w or module.startswith(w + ".") for w in wings)


def _cycles() -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(GRAPH.get(node, ())):
            # A package's __init__ importing its own submodules is not a circle.
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    return found


def test_no_import_circles() -> None:
    assert _cycles() == []


def test_no_upward_imports() -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items() if _in(module, LOWER_WINGS)
        for target in targets
        if target.split(".")[0] == "rules" or _in(target, COMPOSITION_ROOTS)
    )
    assert upward == []


def test_kernel_imports_nothing_else_of_bot() -> None:
    outside = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items() if _in(module, ("bot.core",))
        for target in targets if not _in(target, ("bot.core",)) and target != "bot"
    )
    assert outside == []


def test_rules_import_only_the_kernel() -> None:
    outside = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items() if module.split(".")[0] == "rules"
        for target in targets
        if target.startswith("bot") and not _in(target, ("bot.core",))
    )
    assert outside == []


def test_function_local_imports_are_deliberate() -> None:
    hidden = []
    for module, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for target, line_no, local in _imports(module, path):
            # The reason must be said in a comment just above the import.
            context = "\n".join(lines[max(0, line_no - 4):line_no])
            if local and LAZY_COMMENT not in context:
                hidden.append(f"{path.relative_to(ROOT)}:{line_no} imports {target}")
    assert hidden == []


def test_modules_are_small_and_named_for_what_they_do() -> None:
    too_long = [f"{path.relative_to(ROOT)}: {n} lines" for path in MODULES.values()
                if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    banned = {"util", "utils", "support", "helpers", "misc"}
    grab_bags = [str(path.relative_to(ROOT)) for path in MODULES.values()
                 if banned & set(path.with_suffix("").parts)]
    assert too_long == []
    assert grab_bags == []


def test_one_event_table_for_intake_routes_and_the_manifest() -> None:
    manifest = yaml.safe_load((ROOT / "app.yaml").read_text(encoding="utf-8"))
    assert set(manifest["default_events"]) == SUBSCRIBED_EVENTS
    assert set(HANDLERS) == set(HANDLED_ACTIONS) | IMPLICIT_EVENTS
