"""Repository configuration (`.github/ci-stability.yml`): parsing and validation.

Every error names the key and the line, because maintainers edit this file by hand
and a traceback tells them nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from bot.core.config_defaults import DEFAULT_DEDUP_HEADING, DEFAULT_KNOBS
from bot.core.findings import Severity
from bot.core.globs import validate_glob
from bot.core.surfaces import SURFACES

CONFIG_PATH = ".github/ci-stability.yml"
MAX_CONFIG_BYTES = 256 * 1024
_MAX_NODES = 20_000  # guards against alias bombs: composed YAML shares nodes

class ConfigError(ValueError):
    """A configuration problem, already phrased for the person who wrote the file."""


@dataclass(frozen=True)
class RuleSettings:
    enabled: bool = True
    severity: Severity | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Ignore:
    rule: str
    paths: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Config:
    rules: Mapping[str, RuleSettings] = field(default_factory=dict)
    surfaces: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    knobs: tuple[str, ...] = DEFAULT_KNOBS
    dedup_heading: str = DEFAULT_DEDUP_HEADING
    fail_on: Severity | None = Severity.ERROR
    ignores: tuple[Ignore, ...] = ()
    review_drafts: bool = False
    # The LLM advisor, for this repository; it also needs the operator's model settings.
    advisor: bool = False
    source: str | None = None

    def settings(self, rule_id: str) -> RuleSettings:
        return self.rules.get(rule_id, RuleSettings())

    def option(self, rule_id: str, name: str, default: Any) -> Any:
        return self.settings(rule_id).options.get(name, default)


# The rule registry as config validation needs it: rule id → option defaults.
RuleOptionSpecs = Mapping[str, Mapping[str, Any]]


def _where(node: yaml.Node) -> str:
    return f"line {node.start_mark.line + 1}"


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.visited = 0

    def fail(self, node: yaml.Node, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source}:{node.start_mark.line + 1}: `{key}`: {message}")

    def plain(self, node: yaml.Node, key: str) -> Any:
        """Convert a node to Python data with a node budget (no alias bombs)."""
        self.visited += 1
        if self.visited > _MAX_NODES:
            raise self.fail(node, key, "too many values (aliases expand too far)")
        if isinstance(node, yaml.ScalarNode):
            return yaml.constructor.SafeConstructor().construct_object(node)
        if isinstance(node, yaml.SequenceNode):
            return [self.plain(item, key) for item in node.value]
        if isinstance(node, yaml.MappingNode):
            return {self.plain(k, key): self.plain(v, key) for k, v in node.value}
        raise self.fail(node, key, "unsupported YAML value")

    def mapping(self, node: yaml.Node, key: str) -> list[tuple[str, yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, key, "expected a mapping")
        items: list[tuple[str, yaml.Node, yaml.Node]] = []
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                raise self.fail(knode, key, "keys must be plain strings")
            items.append((str(knode.value), knode, vnode))
        return items

    def string(self, node: yaml.Node, key: str) -> str:
        value = self.plain(node, key)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(node, key, "expected a non-empty string")
        return value

    def boolean(self, node: yaml.Node, key: str) -> bool:
        value = self.plain(node, key)
        if not isinstance(value, bool):
            raise self.fail(node, key, f"expected true or false, got {value!r}")
        return value

    def strings(self, node: yaml.Node, key: str) -> tuple[str, ...]:
        if isinstance(node, yaml.ScalarNode):
            return (self.string(node, key),)
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, key, "expected a list of strings")
        return tuple(self.string(item, key) for item in node.value)

    def globs(self, node: yaml.Node, key: str) -> tuple[str, ...]:
        globs = self.strings(node, key)
        for glob in globs:
            problem = validate_glob(glob)
            if problem:
                raise self.fail(node, key, problem)
        return globs

    def severity(self, node: yaml.Node, key: str) -> Severity:
        try:
            return Severity.parse(self.string(node, key))
        except ValueError as exc:
            raise self.fail(node, key, str(exc)) from None


def _close_match(name: str, known: Sequence[str]) -> str:
    import difflib

    guesses = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean `{guesses[0]}`?)" if guesses else ""


_TOP_KEYS = ("version", "fail_on", "rules", "surfaces", "knobs", "extra_knobs",
             "dedup_heading", "ignore", "review_drafts", "advisor")


def parse_config(text: str, specs: RuleOptionSpecs, source: str = CONFIG_PATH) -> Config:
    """Parse and validate a config file; raise ConfigError naming key and line."""
    if len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: file is larger than {MAX_CONFIG_BYTES // 1024} KiB")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{source}{where}: not valid YAML: {problem}") from None
    if root is None:
        return Config(source=source)
    reader = _Reader(source)
    values: dict[str, Any] = {"source": source}
    knobs: list[str] = list(DEFAULT_KNOBS)
    extra_knobs: list[str] = []
    for key, knode, vnode in reader.mapping(root, "(top level)"):
        if key not in _TOP_KEYS:
            raise reader.fail(knode, key, "unknown key" + _close_match(key, _TOP_KEYS))
        if key == "version":
            if reader.plain(vnode, key) != 1:
                raise reader.fail(vnode, key, "only version 1 is supported")
        elif key == "fail_on":
            raw = reader.string(vnode, key)
            if raw.strip().lower() == "none":
                values["fail_on"] = None
            elif raw.strip().upper() in Severity.__members__:
                values["fail_on"] = Severity.parse(raw)
            else:
                raise reader.fail(vnode, key,
                                  f"expected error, warning, notice or none, got {raw!r}")
        elif key == "rules":
            values["rules"] = _parse_rules(reader, vnode, specs)
        elif key == "surfaces":
            surfaces: dict[str, tuple[str, ...]] = {}
            for name, sknode, gnode in reader.mapping(vnode, key):
                if name not in SURFACES:
                    raise reader.fail(
                        sknode, f"surfaces.{name}",
                        f"unknown surface (known: {', '.join(SURFACES)})",
                    )
                surfaces[name] = reader.globs(gnode, f"surfaces.{name}")
            values["surfaces"] = surfaces
        elif key == "knobs":
            knobs = list(reader.strings(vnode, key))
        elif key == "extra_knobs":
            extra_knobs = list(reader.strings(vnode, key))
        elif key == "dedup_heading":
            pattern = reader.string(vnode, key)
            try:
                re.compile(pattern)
            except re.error as exc:
                raise reader.fail(vnode, key, f"not a valid regular expression: {exc}") from None
            values["dedup_heading"] = pattern
        elif key == "ignore":
            values["ignores"] = _parse_ignores(reader, vnode, specs)
        elif key == "review_drafts":
            values["review_drafts"] = reader.boolean(vnode, key)
        elif key == "advisor":
            values["advisor"] = reader.boolean(vnode, key)
    values["knobs"] = tuple(k.strip().lower().replace("_", "-") for k in knobs + extra_knobs)
    return Config(**values)


def _parse_rules(
    reader: _Reader, node: yaml.Node, specs: RuleOptionSpecs
) -> dict[str, RuleSettings]:
    rules: dict[str, RuleSettings] = {}
    for rule_id, knode, vnode in reader.mapping(node, "rules"):
        where = f"rules.{rule_id}"
        if rule_id not in specs:
            raise reader.fail(knode, where, "unknown rule" + _close_match(rule_id, list(specs)))
        if isinstance(vnode, yaml.ScalarNode):
            # Shorthands: `rule-id: false` / `rule-id: error`.
            value = reader.plain(vnode, where)
            if isinstance(value, bool):
                rules[rule_id] = RuleSettings(enabled=value)
                continue
            rules[rule_id] = RuleSettings(severity=reader.severity(vnode, where))
            continue
        settings: dict[str, Any] = {}
        for key, sknode, svnode in reader.mapping(vnode, where):
            if key == "enabled":
                settings["enabled"] = reader.boolean(svnode, f"{where}.enabled")
            elif key == "severity":
                settings["severity"] = reader.severity(svnode, f"{where}.severity")
            elif key == "options":
                settings["options"] = _parse_options(reader, svnode, where, specs[rule_id])
            else:
                raise reader.fail(sknode, f"{where}.{key}",
                                  "unknown key (expected enabled, severity, options)")
        rules[rule_id] = RuleSettings(**settings)
    return rules


def _parse_options(
    reader: _Reader, node: yaml.Node, where: str, spec: Mapping[str, Any]
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for name, knode, vnode in reader.mapping(node, f"{where}.options"):
        key = f"{where}.options.{name}"
        if name not in spec:
            known = ", ".join(spec) or "none"
            raise reader.fail(knode, key, f"unknown option (known: {known})")
        default = spec[name]
        if isinstance(default, tuple | list):
            options[name] = reader.strings(vnode, key)
        elif isinstance(default, bool):
            options[name] = reader.boolean(vnode, key)
        elif isinstance(default, int):
            value = reader.plain(vnode, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise reader.fail(vnode, key, f"expected a non-negative integer, got {value!r}")
            options[name] = value
        else:
            options[name] = reader.string(vnode, key)
    return options


def _parse_ignores(
    reader: _Reader, node: yaml.Node, specs: RuleOptionSpecs
) -> tuple[Ignore, ...]:
    if not isinstance(node, yaml.SequenceNode):
        raise reader.fail(node, "ignore", "expected a list of {rule, paths, reason}")
    ignores: list[Ignore] = []
    for index, item in enumerate(node.value):
        where = f"ignore[{index}]"
        fields = {key: (knode, vnode) for key, knode, vnode in reader.mapping(item, where)}
        for key, (knode, _) in fields.items():
            if key not in ("rule", "paths", "reason"):
                raise reader.fail(
                    knode, f"{where}.{key}", "unknown key (expected rule, paths, reason)"
                )
        for required in ("rule", "reason"):
            if required not in fields:
                raise reader.fail(item, where, f"`{required}` is required")
        rule = reader.string(fields["rule"][1], f"{where}.rule")
        if rule not in specs:
            raise reader.fail(fields["rule"][1], f"{where}.rule",
                              "unknown rule" + _close_match(rule, list(specs)))
        paths = reader.globs(fields["paths"][1], f"{where}.paths") if "paths" in fields else ("**",)
        ignores.append(Ignore(rule, paths, reader.string(fields["reason"][1], f"{where}.reason")))
    return tuple(ignores)
