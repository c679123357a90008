"""Surfaces by content, for files no path glob claims.

Real repositories keep CI definitions where no default glob looks: a benchmark config
with its own `ci:` section, a Buildkite step template under `tests/`, an eval config
with `model_name` and its gates, a shell script a workflow runs. The text read is the
head text when the snapshot carries it, else the lines the patch shows; every scan is
bounded (the first `_MAX_SCAN` characters, at most `_MAX_CI_FILES` CI files read from
the repository view).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from bot.core.invocations import invoked_paths
from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile

_MAX_SCAN = 16 * 1024
# Files classified by content per review; past it, a huge PR is classified by path only.
MAX_BY_CONTENT = 2000
_MAX_CI_FILES = 16
_CI_DIRS = (".github/workflows", ".buildkite", ".github/scripts", ".jenkins", ".circleci")
# A CI pipeline or job definition: top-level steps/jobs/stages, or commands a runner runs.
_PIPELINE_RE = re.compile(r"^(?:steps|jobs|stages|pipeline|pipelines):\s*$", re.M)
# `commands:` (Buildkite, CircleCI) and GitLab's `script:`; a singular `command:` only
# beside a step's `label:`/`agents:` (Kubernetes manifests use `command:` too).
_COMMAND_RE = re.compile(r"^\s*(?:-\s+)?(?:commands|script):\s*(?:[|>]|\S)", re.M)
_STEP_COMMAND_RE = re.compile(r"^\s*(?:-\s+)?command:\s*\S", re.M)
_STEP_KEY_RE = re.compile(r"^\s*(?:-\s+)?(?:label|agents|depends_on|soft_fail):", re.M)
_CI_SECTION_RE = re.compile(r"^(?:ci|slurm|launcher):\s*$", re.M)
# A model named on the line (`model_name: org/x`), not a `model:` mapping of settings.
_MODEL_RE = re.compile(
    r"(?:^|[{,])\s*(?:-\s+)?[\"']?(?:model_name|model_id|model|pretrained|model_path)"
    r"[\"']?\s*[:=][ \t]*(?=[^\s#|>{\[])", re.M)
# `key: value` lines (also inside one-line JSON objects); a gate is a threshold-like key
# with a number, or with a block of them (`_has_gate`).
_KEY_VALUE_RE = re.compile(
    r"(?:^|[{,])\s*(?:-\s+)?[\"']?([\w.,-]+)[\"']?\s*[:=][ \t]*([^,}\n]*)", re.M)
_GATE_LAST = frozenset({"threshold", "thresholds", "baseline", "baselines", "tolerance",
                        "tolerances", "accuracy", "rtol", "atol"})
_GATE_FIRST = frozenset({"expected", "baseline", "threshold"})
_GATE_KEYS = frozenset({"value", "min_score"})
_NUMBER_RE = re.compile(r"^[\"']?[-+]?(?:\d|\.\d)")
_BLOCK_VALUES = ("", "|", "|-", ">", ">-")
_YAML = (".yaml", ".yml")
_CONFIG = (*_YAML, ".json", ".toml")
_SCRIPTS = (".sh", ".bash", ".py")


def _text(changed: ChangedFile) -> str:
    if changed.head_text is not None:
        return changed.head_text[:_MAX_SCAN]
    return "\n".join(line.text for hunk in changed.hunks for line in hunk.lines
                     if line.new_no is not None)[:_MAX_SCAN]


def ci_texts(ci_files: Sequence[ChangedFile], view: RepoView | None) -> list[str]:
    """Texts of CI files: the PR's own, then a few of the repository's CI definitions."""
    texts = [_text(f) for f in ci_files[:4 * _MAX_CI_FILES]]
    if view is None:
        return texts
    seen = {f.path for f in ci_files}
    budget = _MAX_CI_FILES
    for folder in _CI_DIRS:
        for path in view.list_dir(folder) or ():
            if budget <= 0:
                return texts
            if path in seen:
                continue
            text = view.read(path)
            budget -= 1
            if text is not None:
                texts.append(text[:_MAX_SCAN])
    return texts


class Invoked:
    """The paths CI texts run or pass to a program (`invocations`), read once: is a
    file one of them?"""

    def __init__(self, texts: Sequence[str]) -> None:
        words: set[str] = set()
        for text in texts:
            for word in invoked_paths(text):
                words.add(word)
                parts = word.split("/")
                if len(parts) > 2:
                    words.add("/".join(parts[-2:]))
        self._words = words

    def __call__(self, path: str) -> bool:
        """Named by its path, or by its last two components (`scripts/run.sh`)."""
        parts = PurePosixPath(path).parts
        return path in self._words or (
            len(parts) >= 2 and "/".join(parts[-2:]) in self._words)


def _has_gate(text: str) -> bool:
    """A pass/fail gate: `accuracy_threshold: 0.9`, `expected_accuracy: 0.8`, a metric's
    `value: 0.23`, `rtol: 1e-3`, `baseline:` over a block; not a flag that merely shares a
    word (`use_leave_one_out_baseline: true`, `cliprange_value: 0.2`, `num_key_value_heads`)."""
    for match in _KEY_VALUE_RE.finditer(text):
        key = match.group(1).lower()
        parts = [part for part in re.split(r"[_.,-]", key) if part]
        if not parts or not (key in _GATE_KEYS or parts[-1] in _GATE_LAST
                             or parts[0] in _GATE_FIRST):
            continue
        value = match.group(2).split("#", 1)[0].strip()
        if _NUMBER_RE.match(value) or value in _BLOCK_VALUES or value[:1] in ("{", "["):
            return True
    return False


def content_can_tell(path: str) -> bool:
    """Whether `by_content` could find a surface for this path (so its cost is worth it)."""
    return PurePosixPath(path).suffix.lower() in (*_SCRIPTS, *_CONFIG)


def by_content(changed: ChangedFile, invoked: Invoked) -> str | None:
    """The surface a file's content shows, or None (see the module docstring)."""
    path = changed.path
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in _SCRIPTS:
        return "ci-script" if invoked(path) else None
    if suffix not in _CONFIG:
        return None
    text = _text(changed)
    if suffix in _YAML and (_PIPELINE_RE.search(text) or _CI_SECTION_RE.search(text)
                            or _COMMAND_RE.search(text)
                            or (_STEP_COMMAND_RE.search(text) and _STEP_KEY_RE.search(text))):
        return "ci-config"
    if _MODEL_RE.search(text) and _has_gate(text):
        return "eval-config"
    return "ci-config" if invoked(path) else None
