"""Reading `.github/ci-stability.yml` nodes into values, and collecting their errors."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from bot.core.findings import Severity
from bot.core.globs import validate_glob

FAILED = object()  # a value whose problem was recorded (see Reader.attempt)


class ConfigError(ValueError):
    """A configuration problem, already phrased for the person who wrote the file.

    `problems` holds every problem found (the message joins them), so one round trip
    through `config check` shows them all.
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[str, ...] = tuple(problems) or (message,)


class Exhausted(ConfigError):
    """The node budget ran out: every later value would fail the same way, so stop."""


class Reader:
    """Converts YAML nodes to values; every error names the key and the line."""

    def __init__(self, source: str, max_nodes: int) -> None:
        self.source = source
        self.max_nodes = max_nodes
        self.visited = 0
        self.problems: list[str] = []

    def attempt(self, parse: Callable[[], Any]) -> Any:
        """Run one key's parser, recording its problems instead of stopping at them."""
        try:
            return parse()
        except Exhausted:
            raise
        except ConfigError as exc:
            self.problems.extend(exc.problems)
            return FAILED

    def fail(self, node: yaml.Node, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source}:{node.start_mark.line + 1}: `{key}`: {message}")

    def plain(self, node: yaml.Node, key: str) -> Any:
        """Convert a node to Python data with a node budget (no alias bombs)."""
        self.visited += 1
        if self.visited > self.max_nodes:
            raise Exhausted(f"{self.source}:{node.start_mark.line + 1}: `{key}`: "
                            "too many values (aliases expand too far)")
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


def close_match(name: str, known: Sequence[str]) -> str:
    guesses = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean `{guesses[0]}`?)" if guesses else ""
