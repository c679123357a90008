"""Classify changed files into CI-stability surfaces (DESIGN.md defaults, configurable)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.core.globs import glob_match

# Ordered most specific first: the first surface whose globs match wins.
DEFAULT_SURFACES: dict[str, tuple[str, ...]] = {
    "eval-config": (
        "**/evals/**/*.{yaml,yml,json}",
        "**/eval*/configs/**",
        "**/lm_eval*/**/*.y*ml",
        "**/*accuracy*.{json,yaml,yml}",
        ".github/benchmark*/**",
    ),
    "cpu-test": ("test*/**/cpu/**/*.py",),
    "workflow": (
        ".github/workflows/*.y*ml",
        ".github/actions/**/action.y*ml",
        ".buildkite/**/*.y*ml",
    ),
    "ci-script": (
        ".github/**/*.sh",
        ".github/scripts/**",
        ".buildkite/**/*.sh",
        "scripts/ci/**",
    ),
    "ci-config": (".github/**/*.{yaml,yml,json,toml}",),
    "container": ("**/Dockerfile*", "docker/**"),
    "test": ("test/**", "tests/**", "**/test_*.py", "**/*_test.py", "**/conftest.py"),
}

SURFACES: tuple[str, ...] = tuple(DEFAULT_SURFACES)
PRIMARY_SURFACES = frozenset({"eval-config", "cpu-test", "workflow"})


def surface_table(
    extra: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, tuple[str, ...]]:
    """Default globs plus a repository's extra globs, in specificity order."""
    table = dict(DEFAULT_SURFACES)
    for surface, globs in (extra or {}).items():
        table[surface] = tuple(globs) + table.get(surface, ())
    return table


def classify(path: str, table: Mapping[str, Sequence[str]]) -> str | None:
    for surface, globs in table.items():
        if any(glob_match(glob, path) for glob in globs):
            return surface
    return None
