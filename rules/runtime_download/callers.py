"""Does the CI job that runs a script cache around it?

A pre-fetch tool (`tools/download_model.py`) is the mitigation the rule recommends
when the job running it restores and saves a model cache around it (vllm-spyre's
test workflow: `actions/cache/restore`, then the tool, then `actions/cache/save`).
Judged from the script alone, every such tool "downloads with no cache". So for a CI
script, the jobs that invoke it are read too: the PR's own CI files, then a few of the
repository's workflows and pipelines (bounded), and the download counts as mitigated
when every job that runs the script caches or goes offline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import PurePosixPath

from bot.core.invocations import invoked_paths
from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile, PullRequestSnapshot

_CI_SURFACES = ("workflow", "ci-config", "ci-script")
_CI_DIRS = (".github/workflows", ".buildkite")
MAX_CALLER_FILES = 8
# Inside a script an existence test guards the download beside it; elsewhere in a job it
# guards something else (`[ ! -d "$HOME/Megatron-LM" ] && git clone …`), so it is no cache.
_EXISTENCE_RE = re.compile(
    r"\[\[?\s+!?\s*-[fesd]\s|\btest\s+-[fesd]\s|os\.path\.exists|\.exists\(\)")


def _depth(line: str) -> float:
    stripped = line.lstrip()
    # A YAML list item sits just inside its parent key even at the same indentation.
    return len(line) - len(stripped) + (0.5 if stripped.startswith("- ") else 0.0)


def _job(lines: Sequence[str], index: int) -> Sequence[str]:
    """The job (or pipeline step) holding line `index`: its outermost ancestor below the
    top level, down to the next line as shallow; the whole text for flat scripts."""
    start, depth = None, _depth(lines[index])
    for i in range(index - 1, -1, -1):
        if not lines[i].strip() or lines[i].lstrip().startswith("#"):
            continue
        d = _depth(lines[i])
        if d < depth:
            depth = d
            if d > 0:
                start = i
    if start is None:
        return lines
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _depth(lines[end]) > depth):
        end += 1
    return lines[start:end]


def _texts(snapshot: PullRequestSnapshot, changed: ChangedFile) -> Iterator[str]:
    seen = {changed.path}
    for other in snapshot.files:
        if other.surface in _CI_SURFACES and other.path not in seen \
                and other.head_text is not None:
            seen.add(other.path)
            yield other.head_text
    repo: RepoView | None = snapshot.repo_view
    if repo is None:
        return
    budget = MAX_CALLER_FILES
    for folder in _CI_DIRS:
        for path in repo.list_dir(folder) or ():
            if budget <= 0:
                return
            if path in seen:
                continue
            budget -= 1
            text = repo.read(path)
            if text is not None:
                yield text


def callers_mitigate(snapshot: PullRequestSnapshot, changed: ChangedFile,
                     mitigates: Callable[[str], bool]) -> bool:
    """True when the script is run by at least one CI job and every such job caches."""
    parts = PurePosixPath(changed.path).parts
    names = {changed.path, "/".join(parts[-2:])} if len(parts) >= 2 else {changed.path}
    found = False
    for text in _texts(snapshot, changed):
        if not any(name in text for name in names):
            continue
        lines = text.splitlines()
        for index, line in enumerate(lines):
            if not any(name in line for name in names) or not any(
                    word in names or "/".join(word.split("/")[-2:]) in names
                    for word in invoked_paths(line)):
                continue
            found = True
            if not any(mitigates(job_line) and not _EXISTENCE_RE.search(job_line)
                       for job_line in _job(lines, index)):
                return False
    return found
