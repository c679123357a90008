"""Which workflow job a line of either side belongs to, and which base jobs were
placeholders: jobs whose every step only echoes (`run: echo ${{ matrix.part }}`).

A placeholder job tests nothing, so a PR that turns it into a real job adds a job: its
shard list or timeout is new, not a count or a limit changed. Threshold-loosening reads
the same jobs so that a value is never paired with one of another job.
"""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile
from rules.analysis.memo import memoized
from rules.analysis.yamlscan import YamlLine, base_view, view

_MAX_TEXT = 1_000_000  # larger files are not scanned whole
# A shell line that does nothing a test could fail on.
_NO_OP_RE = re.compile(r"^(?:echo|printf|true|:|exit\s+0|sleep\s+\d+)(?:\s|$)")


@memoized
def side_view(changed: ChangedFile, which: str) -> dict[int, YamlLine] | None:
    """The whole base or head text scanned, by line number; None when unknown."""
    lines = changed.base_lines if which == "base" else changed.head_lines
    if not lines or sum(map(len, lines)) > _MAX_TEXT:
        return None
    # The scans every YAML reader shares: the head's `view` is the whole head text here.
    return base_view(changed) if which == "base" else view(changed).lines


def job_of(view: dict[int, YamlLine] | None, number: int) -> str:
    """The key under `jobs:` that line `number` sits in ("" when none or unknown)."""
    found = view.get(number) if view else None
    if found is None or found.path[:1] != ("jobs",):
        return ""
    path = found.full_path
    return path[1] if len(path) > 1 else ""


@memoized
def jobs(changed: ChangedFile, which: str) -> frozenset[str]:
    """Every job a side defines."""
    view = side_view(changed, which)
    if view is None:
        return frozenset()
    return frozenset(y.key for y in view.values()
                     if y.kind == "key" and y.path == ("jobs",) and y.key)


@memoized
def placeholder_jobs(changed: ChangedFile) -> frozenset[str]:
    """Base jobs that were placeholders and that the PR makes real: the base job ran
    only no-op commands (no `uses:`, every `run:` line an `echo`, `true`, `sleep`), a
    mock standing in for a job not written yet, and the head job runs more. A job that
    stays a placeholder (or a test's `run: echo` filler) is judged as it is."""
    base = _placeholders(changed, "base")
    return base - _placeholders(changed, "head") if base else base


def _placeholders(changed: ChangedFile, which: str) -> frozenset[str]:
    view = side_view(changed, which)
    if view is None:
        return frozenset()
    commands: dict[str, list[str]] = {}
    real: set[str] = set()
    for y in view.values():
        if y.path[:1] != ("jobs",) or len(y.path) < 2:
            continue
        job = y.path[1]
        if y.kind == "key" and y.key == "uses":
            real.add(job)
        elif y.kind == "key" and y.key == "run" and y.opens is None:
            commands.setdefault(job, []).append(y.value)
        elif y.block is not None and y.block.key == "run" and y.kind not in ("key", "comment"):
            commands.setdefault(job, []).append(y.text)
    return frozenset(
        job for job, lines in commands.items() if job not in real and all(
            _NO_OP_RE.match(line.strip().strip("\"'")) for line in lines
            if line.strip() and not line.strip().startswith("#")))
