"""What of a pull request's changed files a CI job could mention (pure).

A job relates to a changed file when its name, step, log lines or test node ids
name that file: the eval config's stem (`GLM-5.2-NVFP4-TP1-PCP4-EP` for
`tests/evals/gsm8k/configs/GLM-5.2-NVFP4-TP1-PCP4-EP.yaml`, as pytest parameter ids
and config loaders print it), a test file's path or name (node ids start with it),
a workflow's file and `name:`, or the job and step labels a pipeline hunk touches.
Generic names (`config.yaml`, `conftest.py`, `ci.yml`) would tie every job to every
PR, so they only count as full paths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath

from bot.core.snapshot import ChangedFile, PullRequestSnapshot

MAX_NEEDLES = 60
_MIN_STEM = 6
_GENERIC = frozenset({
    "__init__", "conftest", "setup", "config", "configs", "settings", "constants", "common",
    "utils", "util", "helpers", "base", "main", "default", "defaults", "release", "nightly",
    "models", "requirements", "pyproject", "dockerfile", "readme", "index", "build", "docker",
    "pre-commit", "pre-commit-config", "codeowners", "ci", "test", "tests", "lint", "run",
    "action", "workflow", "pipeline", "values", "env", "matrix",
})
_CONFIG_EXT = frozenset({".yaml", ".yml", ".json", ".toml", ".txt"})
_NAMED_EXT = frozenset({".py", ".sh", ".yaml", ".yml", ".json", ".toml"})
_LABEL = re.compile(r"^\s*(?:-\s+)?(label|name)\s*:\s*(.+?)\s*$")
_WORKFLOW_NAME = re.compile(r"^name\s*:\s*(.+?)\s*$", re.M)
_JOB_KEY = re.compile(r"^  ([A-Za-z_][\w-]*):\s*(?:#.*)?$")
_JOB_NAME = re.compile(r"^    name\s*:\s*(.+?)\s*$")
_MAX_WALK = 400
_EMOJI = re.compile(r":[a-z0-9_+-]+:")
_TEMPLATE = re.compile(r"\s*\(?\s*\$\{\{.*")


class NeedleKind(StrEnum):
    PATH = "path"
    FILE_NAME = "file name"
    CONFIG_STEM = "config stem"
    WORKFLOW_FILE = "workflow file"
    WORKFLOW_NAME = "workflow name"
    JOB_LABEL = "job or step label"


@dataclass(frozen=True)
class Needle:
    kind: NeedleKind
    text: str
    path: str  # the changed file it stands for

    @property
    def exact(self) -> bool:
        """Compared whole against one field, not searched for in text."""
        return self.kind in {NeedleKind.WORKFLOW_NAME, NeedleKind.JOB_LABEL,
                             NeedleKind.WORKFLOW_FILE}


def normalize_label(value: str) -> str:
    """A job / step / workflow label as comparable text: no emoji codes, quotes or case.

    A templated name (`build (${{ matrix.python }})`) keeps its fixed prefix (`build`);
    `label_matches` then accepts the expanded names (`build (3.11)`).
    """
    value = _TEMPLATE.sub("", value.strip().strip("'\""))
    value = _EMOJI.sub(" ", value)
    return " ".join(value.split()).lower()


def label_matches(needle: str, label: str) -> bool:
    """`label` (a job/step name as CI reports it) is the one `needle` stands for."""
    name = normalize_label(label)
    return name == needle or name.startswith(needle + " (")


def _is_pipeline_file(path: str) -> bool:
    return path.startswith((".github/workflows/", ".buildkite/", ".github/actions/")) or (
        "/.buildkite/" in path
    )


def _specific(stem: str) -> bool:
    return len(stem) >= _MIN_STEM and stem.lower() not in _GENERIC


def _file_needles(changed: ChangedFile) -> list[Needle]:
    path = changed.path
    pure = PurePosixPath(path)
    out = [Needle(NeedleKind.PATH, path, path)]
    if changed.previous_path and changed.previous_path != path:
        out.append(Needle(NeedleKind.PATH, changed.previous_path, path))
    if path.startswith(".github/workflows/"):
        out.append(Needle(NeedleKind.WORKFLOW_FILE, path, path))
    suffix = pure.suffix.lower()
    if suffix in _NAMED_EXT and _specific(pure.stem):
        out.append(Needle(NeedleKind.FILE_NAME, pure.name, path))
    if suffix in _CONFIG_EXT and _specific(pure.stem) and not _is_pipeline_file(path):
        out.append(Needle(NeedleKind.CONFIG_STEM, pure.stem, path))
    return out


def _hunk_texts(changed: ChangedFile) -> list[str]:
    return [line.text for hunk in changed.hunks for line in hunk.lines]


def _enclosing_labels(changed: ChangedFile) -> list[str]:
    """Names of the jobs/steps a hunk sits in, found by walking up the full text."""
    lines = changed.head_lines or changed.base_lines
    if not lines:
        return []
    workflow = changed.path.startswith(".github/workflows/")
    found: list[str] = []
    for hunk in changed.hunks:
        start = min(max(hunk.new_start if changed.head_lines else hunk.old_start, 1), len(lines))
        for i in range(start - 1, max(start - 1 - _MAX_WALK, -1), -1):
            line = lines[i]
            if workflow and (key := _JOB_KEY.match(line)):
                found.append(_job_name(lines, i) or key.group(1))
                break
            if not workflow and (label := _LABEL.match(line)) and label.group(1) == "label":
                found.append(label.group(2))
                break
    return found


def _job_name(lines: tuple[str, ...], key_index: int) -> str | None:
    """The `name:` of the GitHub Actions job whose key is at `key_index`."""
    for line in lines[key_index + 1: key_index + _MAX_WALK]:
        if line.strip() and not line.startswith("   "):
            return None  # the next job (or top-level key) starts
        if (found := _JOB_NAME.match(line)) is not None:
            return found.group(1)
    return None


def _label_needles(changed: ChangedFile) -> list[Needle]:
    if not _is_pipeline_file(changed.path):
        return []
    out: list[Needle] = []
    text = changed.head_text if changed.head_text is not None else changed.base_text
    top = _WORKFLOW_NAME.search(text) if text else None
    if top is None:
        top = next((m for t in _hunk_texts(changed) if (m := _WORKFLOW_NAME.match(t))), None)
    if top is not None and changed.path.startswith(".github/workflows/"):
        name = normalize_label(top.group(1))
        if name:
            out.append(Needle(NeedleKind.WORKFLOW_NAME, name, changed.path))
    labels = list(_enclosing_labels(changed))
    for line in _hunk_texts(changed):
        found = _LABEL.match(line)
        # A column-0 `name:` is the workflow's own, handled above.
        if found is not None and (found.group(1) == "label" or line[:1] in {" ", "-"}):
            labels.append(found.group(2))
    for raw in labels:
        label = normalize_label(raw)
        if len(label) >= 3 and label not in _GENERIC:
            out.append(Needle(NeedleKind.JOB_LABEL, label, changed.path))
    return out


def needles_for(snapshot: PullRequestSnapshot, limit: int = MAX_NEEDLES) -> tuple[Needle, ...]:
    """Distinct needles for every changed file, most specific kinds first, capped."""
    found: dict[tuple[NeedleKind, str], Needle] = {}
    for changed in snapshot.files:
        for needle in (*_file_needles(changed), *_label_needles(changed)):
            found.setdefault((needle.kind, needle.text.lower()), needle)
    order = list(NeedleKind)
    ranked = sorted(found.values(), key=lambda n: order.index(n.kind))
    return tuple(ranked[:limit])


def substring_texts(needles: tuple[Needle, ...]) -> tuple[str, ...]:
    """Texts a database can pre-filter on (case-insensitive substrings)."""
    return tuple(dict.fromkeys(n.text for n in needles if not n.exact))


def boundary_pattern(text: str) -> re.Pattern[str]:
    """`text` as a whole token: `test_x.py` must not match inside `test_x.pyi` or `my_test_x`."""
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", re.I)
