"""allocator-scope: PyTorch allocator settings added at a broad scope, or malformed."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bot.findings import Finding, Severity
from bot.snapshot import ChangedFile, DiffLine, PullRequestSnapshot
from rules.base import Rule, RuleContext
from rules.support.allocconf import OPTIONS, check_value
from rules.support.explain import comment_text, description_explains
from rules.support.yamlscan import ITEM, YamlLine, YamlView, is_yaml, unquote, view

_VAR_RE = re.compile(r"\bPYTORCH_(?:[A-Z0-9]+_)?ALLOC_CONF\b")
_CALL_RE = re.compile(r"\b_set_allocator_settings\s*\(\s*(?:\"([^\"]*)\"|'([^']*)')?")
_PY_VALUE_RE = re.compile(r"""\A["']\s*(?:\]\s*)?(?:=(?!=)|:|,)\s*(?:"([^"]*)"|'([^']*)')?""")
_READ_RE = re.compile(r"""(?:\.get|getenv|\.pop|\bdel\s+\S*)\s*[(\[]\s*["']$""")
_EQ_VALUE_RE = re.compile(r"""\A=(?:"([^"]*)"|'([^']*)'|([^\s"';|&)]*))""")
_ENV_SPACE_RE = re.compile(r"^\s*ENV\s+PYTORCH_\w*ALLOC_CONF\s+(\S+)\s*$")
_ENVIRON_RE = re.compile(
    r"environ\s*\[\s*$|environ\.(?:setdefault|update)\s*\(|\.setenv\s*\(|os\.putenv\s*\(")
_FIXTURE_SCOPE_RE = re.compile(r"scope\s*=\s*[\"'](session|module|package|class)[\"']")
_PYTEST_RUN_RE = re.compile(r"\bpytest\b|\brun_suite\b|\blm_eval\b")
_CONFIG_LIST_RE = re.compile(r"--config-list-file[= ]+(\S+?)['\"]?(?:\s|$)")
_DEF_RE = re.compile(r"(?:async\s+)?(def|class)\s+(\w+)")
_TEMPLATE = ("$", "{", "%")

_VALIDATED = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "_set_allocator_settings")


@dataclass(frozen=True)
class _Setting:
    var: str  # the variable, or `_set_allocator_settings`
    value: str | None  # None when templated or not on the line
    raw: str  # the value as written on the line (for the suggestion)


@dataclass(frozen=True)
class _Scope:
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


class AllocatorScope(Rule):
    """PyTorch allocator settings belong to the one config or test that needs them.

    Why it destabilizes CI
    ----------------------
    `PYTORCH_CUDA_ALLOC_CONF` (and its HIP/XPU/NPU siblings, `PYTORCH_ALLOC_CONF`,
    `torch.cuda.memory._set_allocator_settings`) changes fragmentation, peak reserved
    memory and speed for every process that inherits it. vLLM #51015 fixed a GLM-5.2
    TP1/PCP4 GSM8K OOM (a 24.43 GiB FlashInfer CUTLASS MoE workspace allocation that
    surfaced only as a 20-minute server-start timeout) by adding
    `expandable_segments:True` to that one eval config's `env:` and explaining why in
    the description. Set at workflow, pipeline, job, Docker image, conftest or shared
    CI-script level instead, the same flag silently changes memory behaviour for every
    other job and hides the next real OOM. A bad value is worse: PyTorch refuses an
    unknown option or a malformed pair at start-up, so every process under that
    scope crashes.

    Flags
    -----
    ```yaml
    env:                      # workflow level: every job inherits it
      PYTORCH_CUDA_ALLOC_CONF: expandable_segment:True   # also an unknown option
    ```
    Also Dockerfile `ENV`, `os.environ[...]`/`monkeypatch.setenv` in `conftest.py` or
    shared test helpers, `export` in a shared CI script (warning); a scoped setting
    with no adjacent comment and no explanation in the description (notice).

    Prefer
    ------
    ```yaml
    # tests/evals/gsm8k/configs/GLM-5.2-NVFP4-TP1-PCP4-EP.yaml
    env:
      # the MoE workspace needs one 24 GiB block; let reserved segments grow
      PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"
    ```
    """

    id = "allocator-scope"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, Any]] = {"extra_options": ()}

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        known = dict(OPTIONS)
        known.update({name: "any" for name in ctx.option("extra_options")})
        for changed in ctx.files():
            added = changed.added_text
            if "ALLOC_CONF" not in added and "_set_allocator_settings" not in added:
                continue
            candidates = [a for a in changed.added_lines if a.new_no is not None and (
                "ALLOC_CONF" in a.text or "_set_allocator_settings" in a.text)]
            if candidates:
                yield from _FileCheck(self, ctx.snapshot, changed, known).run(candidates)


class _FileCheck:
    def __init__(self, rule: AllocatorScope, snapshot: PullRequestSnapshot,
                 changed: ChangedFile, known: dict[str, str]) -> None:
        self.rule, self.snapshot, self.changed, self.known = rule, snapshot, changed, known
        self.path = changed.path
        self.name = posixpath.basename(self.path)
        self.yaml: YamlView | None = view(changed) if is_yaml(self.path) else None
        self.python = self.path.endswith(".py")
        self.docker = self.name.startswith("Dockerfile") or changed.surface == "container"
        self.lines = _visible(changed)
        self._stats: _YamlStats | None = None
        removed = " ".join(r.text for r in changed.removed_lines if "ALLOC" in r.text)
        self.removed_vars = set(_VAR_RE.findall(removed))

    def run(self, candidates: Iterable[DiffLine]) -> Iterator[Finding]:
        for added in candidates:
            number, text = added.new_no or 0, added.text
            if text.lstrip().startswith(("#", "//")):
                continue
            setting = self.setting(number, text)
            if setting is None:
                continue
            yield from self.validate(number, text, setting)
            if setting.var in self.removed_vars:
                continue  # the value changed in place; its scope is not new
            scope = self.scope(number, text, setting)
            if scope is not None:
                yield from self.scope_finding(number, setting, scope)

    # -- what is set ---------------------------------------------------------------
    def setting(self, number: int, text: str) -> _Setting | None:
        call = _CALL_RE.search(text)
        match = _VAR_RE.search(text)
        if match is None:
            if call is None:
                return None
            raw = call.group(1) if call.group(1) is not None else call.group(2)
            return _Setting("_set_allocator_settings", _plain(raw), raw or "")
        var, after = match.group(0), text[match.end():]
        line = self.yaml.get(number) if self.yaml else None
        if line is not None and line.kind == "key" and line.key == var:
            raw = line.value
            return _Setting(var, _plain(unquote(raw)) if raw else None, unquote(raw))
        eq = _EQ_VALUE_RE.match(after)
        if eq:
            raw = next((g for g in eq.groups() if g is not None), "")
            return _Setting(var, _plain(raw), raw)
        before = text[: match.start()]
        py = _PY_VALUE_RE.match(after) if before[-1:] in ("'", '"') else None
        if py and not _READ_RE.search(before):
            raw = py.group(1) if py.group(1) is not None else py.group(2)
            return _Setting(var, _plain(raw), raw or "")
        space = _ENV_SPACE_RE.match(text)
        if space and self.docker:
            raw = unquote(space.group(1))
            return _Setting(var, _plain(raw), raw)
        return None  # a read or a pass-through (`-e VAR`), not a setting

    # -- value validation ------------------------------------------------------------
    def validate(self, number: int, text: str, setting: _Setting) -> Iterator[Finding]:
        if not setting.value:
            return
        strict = setting.var in _VALIDATED
        problems, fixed = check_value(setting.value, self.known if strict else None)
        if not problems:
            return
        suggestion = None
        if fixed is not None and setting.raw and text.count(setting.raw) == 1:
            suggestion = text.replace(setting.raw, fixed, 1)
        fix = f" Use `{fixed}`." if fixed is not None else ""
        message = (f"`{setting.var}` value `{setting.value}` is invalid: "
                   f"{'; '.join(problems)}. PyTorch refuses it when the allocator starts, "
                   f"so every process that inherits it crashes.{fix}")
        yield self.rule.finding(message, file=self.changed, line=number, suggestion=suggestion,
                                severity=Severity.ERROR,
                                key=f"value|{setting.var}|{setting.value}")

    # -- scope -----------------------------------------------------------------------
    def scope(self, number: int, text: str, setting: _Setting) -> _Scope | None:
        stripped = text.strip()
        if "GITHUB_ENV" in text:
            return _Scope(True, "`$GITHUB_ENV`", ", which applies to every later step of the job")
        if self.yaml is not None:
            line = self.yaml.get(number)
            return self.yaml_scope(line) if line is not None else None
        if self.changed.surface == "eval-config":
            return _Scope(False, "this eval config")
        if self.docker:
            if self.docker_env(number):
                return _Scope(True, "the Dockerfile `ENV`",
                              ", which applies to every container run from this image")
            return _Scope(False, "one `RUN` instruction")
        if self.python:
            return self.python_scope(number, text)
        shared = self.changed.surface == "ci-script"
        if not (shared or self.name.endswith((".sh", ".bash")) or "." not in self.name):
            return _Scope(False, f"`{self.name}`")
        if stripped.startswith("export ") or re.search(r"(?:^|\s)(?:-e|--env)[ =]", text):
            if shared:
                return _Scope(True, f"the shared CI script `{self.name}`",
                              ", which applies to every command and container it runs after "
                              "this line")
            return _Scope(False, f"the script `{self.name}`")
        return _Scope(False, "one command")

    def stats(self) -> _YamlStats:
        if self._stats is None:
            assert self.yaml is not None
            self._stats = _YamlStats.of(self.yaml)
        return self._stats

    def yaml_scope(self, line: YamlLine) -> _Scope:
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
                return _Scope(False, "this eval config")
            return _Scope(False, "this config file")
        full = self.yaml.full
        if path[:1] == ("env",) and line.rooted:
            if workflow:
                runs = sum(stats.runs.values())
                reach = (f", which reaches all {len(stats.jobs)} jobs ({runs} run steps) of this "
                         "workflow" if full else ", which reaches every job of this workflow")
                return _Scope(True, "the workflow-level `env`", reach)
            reach = (f", which reaches all {stats.commands} steps of this pipeline" if full
                     else ", which reaches every step of this pipeline")
            return _Scope(True, "the pipeline-level `env`", reach)
        if workflow:
            if ITEM in path or (not line.rooted and line.indent > 4):
                return _Scope(False, "one step")
            if "services" in path:
                return _Scope(False, "one service container")
            job = path[1] if len(path) > 1 and path[0] == "jobs" else None
            runs = stats.runs.get(job, 0) if job else 0
            matrix = job in stats.matrix
            if full and runs <= 1 and not matrix:
                return _Scope(False, f"job `{job}`")
            what = f"the env of job `{job}`" if job else "a job-level `env`"
            reach = (f", which reaches its {runs} run steps" if full
                     else ", which reaches every step of the job")
            if matrix:
                reach += " in every matrix configuration"
            return _Scope(True, what, reach)
        return self.buildkite_step_scope(line)

    def buildkite_step_scope(self, line: YamlLine) -> _Scope:
        anchor = _step_anchor(line)
        if anchor is None:
            return _Scope(False, "one step")
        step = self.stats().steps.get(anchor)
        if step is None:
            return _Scope(False, "one step")
        label = step.label or f"at line {anchor}"
        commands = " ".join(step.commands)
        configs = _CONFIG_LIST_RE.search(commands)
        if configs:
            return _Scope(True, f"the env of step `{label}`",
                          f", which applies to every config listed in `{configs.group(1)}`")
        runs = len(_PYTEST_RUN_RE.findall(commands))
        if runs > 1:
            return _Scope(True, f"the env of step `{label}`",
                          f", which is shared by its {runs} test commands")
        return _Scope(False, f"step `{label}`")

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

    def python_scope(self, number: int, text: str) -> _Scope:
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
        top = _leading_indent(text) == 0 or (bool(chain) and not defs)
        if conftest or helper or ci_script:
            label = (f"`{directory}/conftest.py`" if conftest else
                     f"the shared CI script `{base}`" if ci_script else
                     f"the shared test helper `{base}`")
            audience = (f"every test collected under `{directory}/`" if conftest else
                        "every suite it runs" if ci_script else "every test that imports it")
            if top and process:
                return _Scope(True, f"{label} at module scope", f", which applies to {audience}")
            if defs:
                _, name, at = defs[-1]
                decorators = _decorators(self.lines, at)
                broad_fixture = "fixture" in decorators and (
                    _FIXTURE_SCOPE_RE.search(decorators) or "autouse=True" in decorators)
                if broad_fixture and process:
                    return _Scope(True, f"the fixture `{name}` in {label}",
                                  f", which applies to {audience}")
                if conftest and name.startswith("pytest_") and process:
                    return _Scope(True, f"the hook `{name}` in {label}",
                                  f", which applies to {audience}")
                if (helper or ci_script) and "fixture" not in decorators:
                    return _Scope(True, f"`{name}()` in {label}",
                                  ", which applies to every test or suite that calls it")
            return _Scope(False, "one fixture or helper")
        return _Scope(False, "this test module" if top else "this test")

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

    def commented(self, number: int) -> bool:
        """A real comment within two lines (explain.comment_near, without its per-line scan)."""
        for near in range(number - 2, number + 3):
            comment = comment_text(self.lines.get(near, ""))
            if comment and len(comment) >= 3:
                return True
        return False

    def scope_finding(self, number: int, setting: _Setting, scope: _Scope) -> Iterator[Finding]:
        shown = f"{setting.var}={setting.value}" if setting.value else setting.var
        if setting.var == "_set_allocator_settings":
            shown = f"_set_allocator_settings({setting.value or '…'!r})"
        key = f"scope|{setting.var}|{setting.value}|{scope.where}"
        if scope.broad:
            yield self.rule.finding(
                f"`{shown}` is set in {scope.where}{scope.reach}: allocator settings change "
                "fragmentation and peak memory for everything under that scope, not just the run "
                "that needed them. Move it to the one eval config, test or step that needs it.",
                file=self.changed, line=number, key=key)
            return
        if self.commented(number):
            return
        subjects = [setting.var, "allocator", "alloc_conf", "expandable"]
        subjects += [p.split(":", 1)[0].strip() for p in (setting.value or "").split(",")]
        if description_explains(self.snapshot.text, subjects):
            return
        yield self.rule.finding(
            f"`{shown}` is scoped to {scope.where}, but neither a comment next to it nor the PR "
            "description says why: name the failure it works around (e.g. the OOM and the run) "
            "so it can be dropped once the cause is fixed.",
            file=self.changed, line=number, key=key, severity=Severity.NOTICE)


def _plain(raw: str | None) -> str | None:
    if raw is None:
        return None
    raw = raw.strip()
    return None if not raw or any(t in raw for t in _TEMPLATE) else raw


def _visible(changed: ChangedFile) -> dict[int, str]:
    if changed.head_lines is not None:
        return dict(enumerate(changed.head_lines, start=1))
    return {line.new_no: line.text for hunk in changed.hunks for line in hunk.lines
            if line.new_no is not None}


def _leading_indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _enclosing(lines: dict[int, str], number: int) -> list[tuple[str, str, int]]:
    """Enclosing blocks of a Python line, outermost first: (def|class|block, name, line)."""
    text = lines.get(number, "")
    current = _leading_indent(text)
    chain: list[tuple[str, str, int]] = []
    for back in range(number - 1, max(0, number - 5000), -1):
        if current == 0:
            break
        line = lines.get(back)
        if line is None:
            break
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        ind = _leading_indent(line)
        if ind < current:
            match = _DEF_RE.match(stripped)
            chain.append((match.group(1), match.group(2), back) if match else ("block", "", back))
            current = ind
    return chain[::-1]


def _decorators(lines: dict[int, str], def_line: int) -> str:
    collected: list[str] = []
    indent = _leading_indent(lines.get(def_line, ""))
    for back in range(def_line - 1, max(0, def_line - 10), -1):
        line = lines.get(back)
        if line is None or not line.strip():
            break
        if _leading_indent(line) <= indent and not line.strip().startswith(("@", ")")):
            break
        collected.append(line.strip())
    return " ".join(collected)
