"""Settings of a feature the PR introduces: names the PR's code newly defines.

"track generation fleet health" adds `probe_timeout_s` to a config dataclass and sets it
in a functional test: the test's value configures the new feature, it retunes nothing.
A name counts as introduced when an added line of a Python file defines it (a field,
a parameter, an argument, a config lookup) and that file's base side never had it; with
repository context, also when the knob's sibling files at the base revision do not set
it and no base file defines it (the view's symbol search).
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot.core.snapshot import LineKind, PullRequestSnapshot
from rules.analysis.knobs import Setting, normalize
from rules.analysis.siblings import sibling_texts

_NAME = r"([A-Za-z_][A-Za-z0-9_]*_[A-Za-z0-9_]+)"  # snake_case: a knob, not a word
_DEFINES_RE = re.compile(
    rf"^\s*{_NAME}\s*:\s*[\w\[\], .|]+(?:=|$)"  # dataclass / pydantic field
    r"|add_argument\(\s*[\"']--([A-Za-z][\w-]*[-_][\w-]+)[\"']"  # argparse flag
    rf"|\bdef \w+\(.*?\b{_NAME}\s*[:=]"  # a parameter with a default or a type
    rf"|\.get\(\s*[\"']{_NAME}[\"']"  # a config lookup
    rf"|\bself\.{_NAME}\s*="
)
_MAX_LINES = 20_000
_MAX_BASE = 400_000


def introduced_names(snapshot: PullRequestSnapshot) -> frozenset[str]:
    """Normalized names that added Python lines define and their files' base sides lack."""
    found: set[str] = set()
    seen = 0
    for changed in snapshot.files:
        if not changed.path.endswith(".py"):
            continue
        defined: set[str] = set()
        removed: list[str] = []
        for hunk in changed.hunks:
            for line in hunk.lines:
                seen += 1
                if seen > _MAX_LINES:
                    return frozenset(found)
                if line.kind is LineKind.REMOVED:
                    removed.append(line.text)
                elif line.kind is LineKind.ADDED and "_" in line.text:
                    defined.update(_defines(line.text[:400]))
        before = "\n".join(removed) + "\n" + (changed.base_text or "")[:_MAX_BASE]
        found.update(normalize(name) for name in defined
                     if re.search(rf"\b{re.escape(name)}\b", before) is None)
    return frozenset(found)


@lru_cache(maxsize=8192)
def _defines(text: str) -> tuple[str, ...]:
    """The names one added line defines: a pure function of the line, and lines repeat
    across a PR's files (one signature per test, the same field in sibling configs)."""
    match = _DEFINES_RE.search(text)
    return tuple(g for g in match.groups() if g) if match else ()


def known_before(snapshot: PullRequestSnapshot, path: str, setting: Setting) -> bool:
    """Whether the repository at base already has the knob: a sibling of `path` sets it,
    or the repository view finds it defined. Without context: False (don't know)."""
    spelled = {setting.raw, setting.raw.replace("-", "_"), setting.raw.replace("_", "-")}
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(s)}(?![\w-])" for s in spelled))
    for text in sibling_texts(snapshot, path) or ():
        if pattern.search(text[:_MAX_BASE]):
            return True
    view = snapshot.repo_view
    if view is None:
        return False
    return bool(view.find_symbol(setting.raw.replace("-", "_")))
