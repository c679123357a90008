"""Classify changed files into CI-stability surfaces (DESIGN.md defaults, configurable).

By path first; a file no path glob claims is then classified by its content (see
`surfaces_content`): a YAML that defines CI steps or jobs, an eval config with a model
and its gates, a script a CI file of the PR or of the repository invokes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from bot.core.globs import glob_regex
from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile
from bot.core.surfaces_content import (
    MAX_BY_CONTENT,
    Invoked,
    by_content,
    ci_texts,
    content_can_tell,
)

# Ordered most specific first: the first surface whose globs match wins.
DEFAULT_SURFACES: dict[str, tuple[str, ...]] = {
    "eval-config": (
        "**/evals/**/*.{yaml,yml,json}",
        "**/eval*/configs/**",
        "**/lm_eval*/**/*.y*ml",
        "**/lm-eval*/**",
        "**/*accuracy*.{json,yaml,yml}",
        ".github/benchmark*/**",
        "**/models-*.txt",
    ),
    "cpu-test": ("test*/**/cpu/**/*.py",),
    "workflow": (
        ".github/workflows/*.y*ml",
        ".github/actions/**/action.y*ml",
        ".buildkite/**/*.y*ml",
        ".gitlab-ci.y*ml",
        ".gitlab/ci/**/*.y*ml",
        ".circleci/*.y*ml",
        "azure-pipelines*.y*ml",
        ".azure-pipelines/**/*.y*ml",
        ".jenkins/**/*.{yaml,yml,groovy}",
        "**/Jenkinsfile*",
    ),
    "ci-script": (
        ".github/**/*.sh",
        ".github/scripts/**",
        ".buildkite/**/*.sh",
        "scripts/ci/**",
        ".jenkins/**",
        ".circleci/**",
        ".gitlab/**",
        "ci/**/*.{sh,py}",
        "tests/**/*.sh",
        "test/**/*.sh",
        "benchmarks/**/*.sh",
    ),
    "ci-config": (".github/**/*.{yaml,yml,json,toml}", "**/test_config*.y*ml"),
    # A docker/ tree's build inputs, not its README.
    "container": ("**/Dockerfile*", "docker/**/*.{sh,bash,py,txt,toml,yaml,yml,json,cfg,ini,env}"),
    "test": ("test/**", "tests/**", "*test/**", "*tests/**", "**/test_*.py", "**/*_test.py",
             "**/conftest.py"),
}

# Files the default globs would sweep in that no CI run reads: prose and images anywhere,
# GitHub's issue/PR templates and the configs of bots that open PRs or label them. A
# repository's own `surfaces:` globs still claim them (only default globs are vetoed).
NOT_SURFACES: tuple[str, ...] = (
    "**/*.{md,rst,png,jpg,jpeg,gif,svg,pdf}",
    ".github/{ISSUE_TEMPLATE,DISCUSSION_TEMPLATE,PULL_REQUEST_TEMPLATE}/**",
    ".github/{dependabot,labeler,release,FUNDING,funding,stale,copy-pr-bot}.{yml,yaml}",
)
# Markdown a test renders, not prose: a Jinja report template under a test tree
# (`tests/e2e/models/report_template.md`), whose broken syntax fails the job.
RENDERED: tuple[str, ...] = ("{test,tests}/**/*{template,Template,TEMPLATE}*.md",
                             "**/{test,tests}/**/*{template,Template,TEMPLATE}*.md")
_DEFAULT_GLOBS = frozenset(glob for globs in DEFAULT_SURFACES.values() for glob in globs)
_VETO = re.compile("|".join(f"(?:{glob_regex(g)})" for g in NOT_SURFACES))
_RENDERED = re.compile("|".join(f"(?:{glob_regex(g)})" for g in RENDERED))

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
    """The first surface with a glob matching `path` (a default glob only when no veto
    matches it), with one regex per surface for its own globs and one for its defaults."""
    return _classified(path, tuple((k, tuple(v)) for k, v in table.items()))


# Every path is asked twice in a review (when the patch is read, then by the engine):
# the second answer is a lookup.
@lru_cache(maxsize=8192)
def _classified(path: str, table: tuple[tuple[str, tuple[str, ...]], ...]) -> str | None:
    vetoed: bool | None = None
    for surface, own, defaults in _matchers(table):
        if own is not None and own.match(path):
            return surface
        if defaults is not None and defaults.match(path):
            if vetoed is None:
                vetoed = _VETO.match(path) is not None and _RENDERED.match(path) is None
            if not vetoed:
                return surface
    return None


def _alternation(globs: Sequence[str]) -> re.Pattern[str] | None:
    """One regex matching what any of `globs` matches (each is anchored at both ends)."""
    if not globs:
        return None
    return re.compile("|".join(f"(?:{glob_regex(g)})" for g in globs))


@lru_cache(maxsize=64)
def _matchers(table: tuple[tuple[str, tuple[str, ...]], ...]
              ) -> list[tuple[str, re.Pattern[str] | None, re.Pattern[str] | None]]:
    # Within a surface the order of its globs does not change the answer: any own glob
    # claims the path, and any default glob does unless a veto matches.
    return [(surface, _alternation([g for g in globs if g not in _DEFAULT_GLOBS]),
             _alternation([g for g in globs if g in _DEFAULT_GLOBS]))
            for surface, globs in table]


def classify_files(files: Sequence[ChangedFile], table: Mapping[str, Sequence[str]],
                   view: RepoView | None = None) -> tuple[str | None, ...]:
    """The surface of each file: by path, else by its content (bounded, see above)."""
    by_path = [classify(f.path, table) for f in files]
    if all(s is not None for s in by_path):
        return tuple(by_path)
    invoked: Invoked | None = None
    out: list[str | None] = []
    budget = MAX_BY_CONTENT
    for changed, surface in zip(files, by_path, strict=True):
        # Only scripts and configs can be told by content: reading the repository's CI
        # files (the view's calls) for a docs-only PR would be spent for nothing.
        if surface is None and not changed.binary and budget > 0 \
                and content_can_tell(changed.path):
            budget -= 1
            if invoked is None:
                invoked = Invoked(ci_texts(
                    [f for f, s in zip(files, by_path, strict=True)
                     if s in ("workflow", "ci-script", "ci-config")], view))
            surface = by_content(changed, invoked)
        out.append(surface)
    return tuple(out)
