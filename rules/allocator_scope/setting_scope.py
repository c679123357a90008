"""How far a setting on a changed line reaches: one step or test, or everything under a scope.

Used by allocator-scope. Workflow, pipeline and job `env`, Buildkite steps shared by
several test commands or configs, `$GITHUB_ENV`, Dockerfile `ENV`, conftest and
shared-helper module scope, broad fixtures and shared CI scripts are broad; a single
step, test, eval config or command is not. Everything is found line by line (the
file may be partial or invalid YAML/Python).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.core.snapshot import ChangedFile
from rules.analysis.lines import indent_width, known_lines, openers
from rules.analysis.yamlscan import ITEM, YamlLine, YamlView, is_yaml, unquote, view

_ENVIRON_RE = re.compile(
    r"environ\s*\[\s*$|environ\.(?:setdefault|update)\s*\(|\.setenv\s*\(|os\.putenv\s*\(")
_FIXTURE_SCOPE_RE = re.compile(r"scope\s*=\s*[\"'](session|module|package|class)[\"']")
_PYTEST_RUN_RE = re.compile(r"\bpytest\b|\brun_suite\b|\blm_eval\b")
_CONFIG_LIST_RE = re.compile(r"--config-list-file[= ]+(\S+?)['\"]?(?:\s|$)")
_DEF_RE = re.compile(r"(?:async\s+)?(def|class)\s+(\w+)")


@dataclass(frozen=True)
class Scope:
    broad: bool
    where: str  # "the workflow-level `env`", "this eval config", ...
    reach: str = ""  # ", which reaches all 4 jobs (17 steps)"


@dataclass
class _Step:
    label: str = ""
    commands: list[str] = field(default_factory=list)


@dataclass
class _YamlStats:
    """Counts a scope message needs, gathered in one pass over the file."""

    jobs: set[str] = field(default_factory=set)
    runs: Counter[str] = field(default_factory=Counter)  # run steps per job
    matrix: set[str] = field(default_factory=set)
    commands: int = 0  # Buildkite command steps
    top_steps: bool = False
    steps: dict[int, _Step] = field(default_factory=dict)  # Buildkite step line → step

    @classmethod
    def of(cls, scanned: YamlView) -> _YamlStats:
        stats = cls()
        for x in scanned:
            path = x.path
            if path == ("jobs",) and x.kind == "key" and x.key:
                stats.jobs.add(x.key)
            elif len(path) >= 2 and path[0] == "jobs":
                if x.key == "run":
                    stats.runs[path[1]] += 1
                elif x.key == "matrix":
                    stats.matrix.add(path[1])
            if x.key in ("command", "commands"):
                stats.commands += 1
            if x.key == "steps" and not path:
                stats.top_steps = True
            anchor = _step_anchor(x)
            if anchor is None:
                continue
            step = stats.steps.setdefault(anchor, _Step())
            if x.key == "label" and x.anchors[-1:] == (anchor,):
                step.label = unquote(x.value)
            if x.key in ("command", "commands") or "command" in path or "commands" in path:
                step.commands.append(x.text)
        return stats


def _step_anchor(line: YamlLine) -> int | None:
    """Line of the innermost Buildkite step (`steps:` item) holding `line`."""
    path, anchors = line.path, line.anchors
    for i in range(len(path) - 1, 0, -1):
        if path[i] == ITEM and path[i - 1] == "steps":
            return anchors[i] if i < len(anchors) and anchors[i] else None
    return None


class SettingScopes:
    """Scope questions about the head lines of one changed file."""

    def __init__(self, changed: ChangedFile) -> None:
        self.changed = changed
        self.path = changed.path
        self.name = posixpath.basename(self.path)
        self.yaml: YamlView | None = view(changed) if is_yaml(self.path) else None
        self.python = self.path.endswith(".py")
        self.docker = self.name.startswith("Dockerfile") or changed.surface == "container"
        self.lines = known_lines(changed)
        self._stats: _YamlStats | None = None

    def scope(self, number: int, text: str) -> Scope | None:
        """How far a setting on head line `number` reaches; None for an unknown line."""
        stripped = text.strip()
        if "GITHUB_ENV" in text:
            return Scope(True, "`$GITHUB_ENV`", ", which applies to every later step of the job")
        if self.yaml is not None:
            line = self.yaml.get(number)
            return self.yaml_scope(line) if line is not None else None
        if self.changed.surface == "eval-config":
            return Scope(False, "this eval config")
        if self.docker:
            if self.docker_env(number):
                return Scope(True, "the Dockerfile `ENV`",
                             ", which applies to every container run from this image")
            return Scope(False, "one `RUN` instruction")
        if self.python:
            return self.python_scope(number, text)
        shared = self.changed.surface == "ci-script"
        if not (shared or self.name.endswith((".sh", ".bash")) or "." not in self.name):
            return Scope(False, f"`{self.name}`")
        if stripped.startswith("export ") or re.search(r"(?:^|\s)(?:-e|--env)[ =]", text):
            if shared:
                return Scope(True, f"the shared CI script `{self.name}`",
                             ", which applies to every command and container it runs after "
                             "this line")
            return Scope(False, f"the script `{self.name}`")
        return Scope(False, "one command")

    def stats(self) -> _YamlStats:
        if self._stats is None:
            assert self.yaml is not None
            self._stats = _YamlStats.of(self.yaml)
        return self._stats

    def yaml_scope(self, line: YamlLine) -> Scope:
        assert self.yaml is not None
        path = line.path
        stats = self.stats()
        surface = self.changed.surface
        workflow = surface == "workflow" and self.path.startswith(".github/")
        pipeline = stats.top_steps or (
            not self.yaml.full and "configs" not in self.path.split("/"))
        buildkite = surface == "workflow" and self.path.startswith(".buildkite/") and pipeline
        if not (workflow or buildkite):
            if self.changed.surface == "eval-config":
                return Scope(False, "this eval config")
            return Scope(False, "this config file")
        full = self.yaml.full
        if path[:1] == ("env",) and line.rooted:
            if workflow:
                runs = sum(stats.runs.values())
                reach = (f", which reaches all {len(stats.jobs)} jobs ({runs} run steps) of this "
                         "workflow" if full else ", which reaches every job of this workflow")
                return Scope(True, "the workflow-level `env`", reach)
            reach = (f", which reaches all {stats.commands} steps of this pipeline" if full
                     else ", which reaches every step of this pipeline")
            return Scope(True, "the pipeline-level `env`", reach)
        if workflow:
            if ITEM in path or (not line.rooted and line.indent > 4):
                return Scope(False, "one step")
            if "services" in path:
                return Scope(False, "one service container")
            job = path[1] if len(path) > 1 and path[0] == "jobs" else None
            runs = stats.runs.get(job, 0) if job else 0
            matrix = job in stats.matrix
            if full and runs <= 1 and not matrix:
                return Scope(False, f"job `{job}`")
            what = f"the env of job `{job}`" if job else "a job-level `env`"
            reach = (f", which reaches its {runs} run steps" if full
                     else ", which reaches every step of the job")
            if matrix:
                reach += " in every matrix configuration"
            return Scope(True, what, reach)
        return self.buildkite_step_scope(line)

    def buildkite_step_scope(self, line: YamlLine) -> Scope:
        anchor = _step_anchor(line)
        if anchor is None:
            return Scope(False, "one step")
        step = self.stats().steps.get(anchor)
        if step is None:
            return Scope(False, "one step")
        label = step.label or f"at line {anchor}"
        commands = " ".join(step.commands)
        configs = _CONFIG_LIST_RE.search(commands)
        if configs:
            return Scope(True, f"the env of step `{label}`",
                         f", which applies to every config listed in `{configs.group(1)}`")
        runs = len(_PYTEST_RUN_RE.findall(commands))
        if runs > 1:
            return Scope(True, f"the env of step `{label}`",
                         f", which is shared by its {runs} test commands")
        return Scope(False, f"step `{label}`")

    def docker_env(self, number: int) -> bool:
        for back in range(number, max(0, number - 50), -1):
            text = self.lines.get(back)
            if text is None:
                return False
            if back != number and not text.rstrip().endswith("\\"):
                return False
            if text.lstrip().upper().startswith("ENV "):
                return True
        return False

    def python_scope(self, number: int, text: str) -> Scope:
        chain = _enclosing(self.lines, number)
        defs = [(kind, name, at) for kind, name, at in chain if kind == "def"]
        process = bool(_ENVIRON_RE.search(text) or "environ[" in text
                       or "_set_allocator_settings" in text or self.inside_environ_call(number))
        base = self.name
        conftest = base == "conftest.py"
        directory = posixpath.dirname(self.path) or "."
        helper = not conftest and (not re.match(r"test_|.*_test\.py$", base)
                                   or base in ("test_utils.py", "testing_utils.py"))
        ci_script = self.changed.surface == "ci-script"
        top = indent_width(text) == 0 or (bool(chain) and not defs)
        if conftest or helper or ci_script:
            label = (f"`{directory}/conftest.py`" if conftest else
                     f"the shared CI script `{base}`" if ci_script else
                     f"the shared test helper `{base}`")
            audience = (f"every test collected under `{directory}/`" if conftest else
                        "every suite it runs" if ci_script else "every test that imports it")
            if top and process:
                return Scope(True, f"{label} at module scope", f", which applies to {audience}")
            if defs:
                _, name, at = defs[-1]
                decorators = _decorators(self.lines, at)
                broad_fixture = "fixture" in decorators and (
                    _FIXTURE_SCOPE_RE.search(decorators) or "autouse=True" in decorators)
                if broad_fixture and process:
                    return Scope(True, f"the fixture `{name}` in {label}",
                                 f", which applies to {audience}")
                if conftest and name.startswith("pytest_") and process:
                    return Scope(True, f"the hook `{name}` in {label}",
                                 f", which applies to {audience}")
                if (helper or ci_script) and "fixture" not in decorators:
                    return Scope(True, f"`{name}()` in {label}",
                                 ", which applies to every test or suite that calls it")
            return Scope(False, "one fixture or helper")
        return Scope(False, "this test module" if top else "this test")

    def inside_environ_call(self, number: int) -> bool:
        depth = 0
        for back in range(number - 1, max(0, number - 8), -1):
            text = self.lines.get(back)
            if text is None:
                return False
            depth += text.count("(") - text.count(")")
            if depth > 0:
                return bool(_ENVIRON_RE.search(text))
        return False


def _enclosing(lines: Mapping[int, str], number: int) -> list[tuple[str, str, int]]:
    """Enclosing blocks of a Python line, outermost first: (def|class|block, name, line)."""
    chain: list[tuple[str, str, int]] = []
    for back, text in openers(lines, number, 5000):
        match = _DEF_RE.match(text.strip())
        chain.append((match.group(1), match.group(2), back) if match else ("block", "", back))
    return chain[::-1]


def _decorators(lines: Mapping[int, str], def_line: int) -> str:
    collected: list[str] = []
    indent = indent_width(lines.get(def_line, ""))
    for back in range(def_line - 1, max(0, def_line - 10), -1):
        line = lines.get(back)
        if line is None or not line.strip():
            break
        if indent_width(line) <= indent and not line.strip().startswith(("@", ")")):
            break
        collected.append(line.strip())
    return " ".join(collected)
