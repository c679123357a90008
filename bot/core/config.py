"""Repository configuration (`.github/ci-stability.yml`): parsing and validation.

Every error names the key and the line, because maintainers edit this file by hand
and a traceback tells them nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

from bot.core.config_defaults import DEFAULT_DEDUP_HEADING, DEFAULT_KNOBS
from bot.core.config_reader import FAILED as _FAILED
from bot.core.config_reader import ConfigError as ConfigError  # re-exported: the public name
from bot.core.config_reader import Exhausted, Reader, check_shape, close_match
from bot.core.findings import Confidence, Severity
from bot.core.limits import HARD_MAX_BYTES, HARD_MAX_FILES, MIN_BYTES, LimitsRequest
from bot.core.surfaces import SURFACES

CONFIG_PATH = ".github/ci-stability.yml"
MAX_CONFIG_BYTES = 256 * 1024
_MAX_NODES = 20_000  # guards against alias bombs: composed YAML shares nodes

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
    # The check's conclusion when the review itself crashes: `neutral` does not block a
    # merge behind a required check (fail open); `failure` does (fail closed).
    on_error: str = "neutral"
    # The LLM advisor, for this repository; it also needs the operator's model settings.
    advisor: bool = False
    # Findings below this confidence are not reported at all (medium: report everything;
    # the medium ones go to the summary, collapsed, never inline).
    min_confidence: Confidence = Confidence.MEDIUM
    # Lower caps on what one review reads (the operator's ceiling still bounds them).
    limits: LimitsRequest | None = None
    source: str | None = None

    def settings(self, rule_id: str) -> RuleSettings:
        return self.rules.get(rule_id, RuleSettings())

    def option(self, rule_id: str, name: str, default: Any) -> Any:
        return self.settings(rule_id).options.get(name, default)


# The rule registry as config validation needs it: rule id → option defaults.
RuleOptionSpecs = Mapping[str, Mapping[str, Any]]


_TOP_KEYS = ("version", "fail_on", "rules", "surfaces", "knobs", "extra_knobs",
             "dedup_heading", "ignore", "review_drafts", "on_error", "advisor",
             "min_confidence", "limits")
ON_ERROR = ("neutral", "failure")


def parse_config(text: str, specs: RuleOptionSpecs, source: str = CONFIG_PATH) -> Config:
    """Parse and validate a config file; raise ConfigError naming key and line."""
    import yaml  # lazy: see `bot.core.config_reader`
    if len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: file is larger than {MAX_CONFIG_BYTES // 1024} KiB")
    try:
        check_shape(text, source)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{source}{where}: not valid YAML: {problem}") from None
    if root is None:
        return Config(source=source)
    reader = Reader(source, _MAX_NODES)
    values: dict[str, Any] = {"source": source}
    try:
        for key, knode, vnode in reader.mapping(root, "(top level)"):
            if key not in _TOP_KEYS:
                reader.problems.extend(reader.fail(
                    knode, key, "unknown key" + close_match(key, _TOP_KEYS)).problems)
                continue
            value = reader.attempt(partial(_top_value, reader, key, vnode, specs))
            if value is not _FAILED and key != "version":
                values[key] = value
    except Exhausted as exc:
        reader.problems.extend(exc.problems)
    if reader.problems:
        raise ConfigError("\n".join(reader.problems), reader.problems)
    knobs = list(values.pop("knobs", DEFAULT_KNOBS)) + list(values.pop("extra_knobs", ()))
    values["knobs"] = tuple(k.strip().lower().replace("_", "-") for k in knobs)
    if "ignore" in values:
        values["ignores"] = values.pop("ignore")
    return Config(**values)


def _top_value(reader: Reader, key: str, vnode: yaml.Node, specs: RuleOptionSpecs) -> Any:
    """The parsed value of one top-level key (raises ConfigError naming key and line)."""
    if key == "version":
        if reader.plain(vnode, key) != 1:
            raise reader.fail(vnode, key, "only version 1 is supported")
        return 1
    if key == "fail_on":
        raw = reader.string(vnode, key)
        if raw.strip().lower() == "none":
            return None
        if raw.strip().upper() in Severity.__members__:
            return Severity.parse(raw)
        raise reader.fail(vnode, key, f"expected error, warning, notice or none, got {raw!r}")
    if key == "on_error":
        raw = reader.string(vnode, key).strip().lower()
        if raw not in ON_ERROR:
            raise reader.fail(vnode, key, f"expected {' or '.join(ON_ERROR)}, got {raw!r}")
        return raw
    if key == "min_confidence":
        raw = reader.string(vnode, key)
        try:
            return Confidence.parse(raw)
        except ValueError as exc:
            raise reader.fail(vnode, key, str(exc)) from None
    if key == "limits":
        return _parse_limits(reader, vnode)
    if key == "rules":
        return _parse_rules(reader, vnode, specs)
    if key == "surfaces":
        surfaces: dict[str, tuple[str, ...]] = {}
        for name, sknode, gnode in reader.mapping(vnode, key):
            if name not in SURFACES:
                raise reader.fail(sknode, f"surfaces.{name}",
                                  f"unknown surface (known: {', '.join(SURFACES)})")
            surfaces[name] = reader.globs(gnode, f"surfaces.{name}")
        return surfaces
    if key in ("knobs", "extra_knobs"):
        return reader.strings(vnode, key)
    if key == "dedup_heading":
        pattern = reader.string(vnode, key)
        try:
            re.compile(pattern)
        except re.error as exc:
            raise reader.fail(vnode, key, f"not a valid regular expression: {exc}") from None
        return pattern
    if key == "ignore":
        return _parse_ignores(reader, vnode, specs)
    return reader.boolean(vnode, key)  # review_drafts, advisor


_LIMIT_BOUNDS = {"max_files": (1, HARD_MAX_FILES), "max_bytes": (MIN_BYTES, HARD_MAX_BYTES)}


def _parse_limits(reader: Reader, node: yaml.Node) -> LimitsRequest:
    values: dict[str, int] = {}
    for name, knode, vnode in reader.mapping(node, "limits"):
        where = f"limits.{name}"
        if name not in _LIMIT_BOUNDS:
            raise reader.fail(knode, where, "unknown key (expected max_files, max_bytes)")
        low, high = _LIMIT_BOUNDS[name]
        value = reader.plain(vnode, where)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise reader.fail(vnode, where,
                              f"expected an integer from {low} to {high}, got {value!r}")
        values[name] = value
    return LimitsRequest(**values)


def _parse_rules(
    reader: Reader, node: yaml.Node, specs: RuleOptionSpecs
) -> dict[str, RuleSettings]:
    rules: dict[str, RuleSettings] = {}
    for rule_id, knode, vnode in reader.mapping(node, "rules"):
        settings = reader.attempt(partial(_parse_rule, reader, rule_id, knode, vnode, specs))
        if settings is not _FAILED:
            rules[rule_id] = settings
    return rules


def _parse_rule(reader: Reader, rule_id: str, knode: yaml.Node, vnode: yaml.Node,
                specs: RuleOptionSpecs) -> RuleSettings:
    import yaml  # lazy: see `bot.core.config_reader`
    where = f"rules.{rule_id}"
    if rule_id not in specs:
        raise reader.fail(knode, where, "unknown rule" + close_match(rule_id, list(specs)))
    if isinstance(vnode, yaml.ScalarNode):
        # Shorthands: `rule-id: false` / `rule-id: error`.
        value = reader.plain(vnode, where)
        if isinstance(value, bool):
            return RuleSettings(enabled=value)
        return RuleSettings(severity=reader.severity(vnode, where))
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
    return RuleSettings(**settings)


def _parse_options(
    reader: Reader, node: yaml.Node, where: str, spec: Mapping[str, Any]
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
    reader: Reader, node: yaml.Node, specs: RuleOptionSpecs
) -> tuple[Ignore, ...]:
    import yaml  # lazy: see `bot.core.config_reader`
    if not isinstance(node, yaml.SequenceNode):
        raise reader.fail(node, "ignore", "expected a list of {rule, paths, reason}")
    ignores = [reader.attempt(partial(_parse_ignore, reader, index, item, specs))
               for index, item in enumerate(node.value)]
    return tuple(i for i in ignores if i is not _FAILED)


def _parse_ignore(reader: Reader, index: int, item: yaml.Node, specs: RuleOptionSpecs
                  ) -> Ignore:
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
                          "unknown rule" + close_match(rule, list(specs)))
    paths = reader.globs(fields["paths"][1], f"{where}.paths") if "paths" in fields else ("**",)
    return Ignore(rule, paths, reader.string(fields["reason"][1], f"{where}.reason"))
