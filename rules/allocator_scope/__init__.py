"""allocator-scope: PyTorch allocator settings added at a broad scope, or malformed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.core.findings import Confidence, Finding, Severity
from bot.core.snapshot import ChangedFile, DiffLine, PullRequestSnapshot
from rules.allocator_scope.allocconf import OPTIONS, check_value
from rules.allocator_scope.convention import convention, moved
from rules.allocator_scope.setting_scope import Scope, SettingScopes
from rules.analysis.lines import comment_near
from rules.analysis.prtext import description_explains
from rules.analysis.yamlscan import unquote
from rules.base import Rule, RuleContext

_VAR_RE = re.compile(r"\bPYTORCH_(?:[A-Z0-9]+_)?ALLOC_CONF\b")
_CALL_RE = re.compile(r"\b_set_allocator_settings\s*\(\s*(?:\"([^\"]*)\"|'([^']*)')?")
_PY_VALUE_RE = re.compile(r"""\A["']\s*(?:\]\s*)?(?:=(?!=)|:|,)\s*(?:"([^"]*)"|'([^']*)')?""")
_READ_RE = re.compile(r"""(?:\.get|getenv|\.pop|\bdel\s+\S*)\s*[(\[]\s*["']$""")
_EQ_VALUE_RE = re.compile(r"""\A=(?:"([^"]*)"|'([^']*)'|([^\s"';|&)]*))""")
_ENV_SPACE_RE = re.compile(r"^\s*ENV\s+PYTORCH_\w*ALLOC_CONF\s+(\S+)\s*$")
_TEMPLATE = ("$", "{", "%")

_VALIDATED = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "_set_allocator_settings")


@dataclass(frozen=True)
class _Setting:
    var: str  # the variable, or `_set_allocator_settings`
    value: str | None  # None when templated or not on the line
    raw: str  # the value as written on the line (for the suggestion)


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
    Not when it is the repository's convention: the same value moved here from another
    file, or already set by sibling files at the base revision (any sibling for a broad
    scope; for one config, most siblings, a recipe shared by a third of them and at least
    three, or the base config a variant such as `Model-A3.yaml` is named after), or,
    for a scoped setting, already set identically elsewhere in the same file (another
    step) or by the file of the same name nearby (the same test one folder up).

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
        self.scopes = SettingScopes(changed)
        # Reading the setting needs the same YAML scan and head lines as its scope.
        self.yaml, self.docker = self.scopes.yaml, self.scopes.docker
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
            scope = self.scopes.scope(number, text)
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

    def scope_finding(self, number: int, setting: _Setting, scope: Scope) -> Iterator[Finding]:
        confidence = Confidence.HIGH
        if setting.value:
            path = self.changed.path
            if moved(self.snapshot, path, setting.var, setting.value):
                return  # it moved here with what needs it: not a new decision
            shared = convention(self.snapshot, path, setting.var, setting.value, scope.broad)
            if shared:
                return  # the siblings set the same: the repository's convention
            if shared is None and not scope.broad:
                confidence = Confidence.MEDIUM  # no repository context to check conventions
        shown = f"{setting.var}={setting.value}" if setting.value else setting.var
        if setting.var == "_set_allocator_settings":
            shown = f"_set_allocator_settings({setting.value or '…'!r})"
        key = f"scope|{setting.var}|{setting.value}|{scope.where}"
        if scope.broad:
            yield self.rule.finding(
                f"`{shown}` is set in {scope.where}{scope.reach}: allocator settings change "
                "fragmentation and peak memory for everything under that scope, not just the run "
                "that needed them. Move it to the one eval config, test or step that needs it.",
                file=self.changed, line=number, key=key, confidence=confidence)
            return
        if comment_near(self.changed, (number,)) is not None:
            return
        subjects = [setting.var, "allocator", "alloc_conf", "expandable"]
        subjects += [p.split(":", 1)[0].strip() for p in (setting.value or "").split(",")]
        if description_explains(self.snapshot.text, subjects):
            return
        yield self.rule.finding(
            f"`{shown}` is scoped to {scope.where}, but neither a comment next to it nor the PR "
            "description says why: name the failure it works around (e.g. the OOM and the run) "
            "so it can be dropped once the cause is fixed.",
            file=self.changed, line=number, key=key, severity=Severity.NOTICE,
            confidence=confidence)


def _plain(raw: str | None) -> str | None:
    if raw is None:
        return None
    raw = raw.strip()
    return None if not raw or any(t in raw for t in _TEMPLATE) else raw
