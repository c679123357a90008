"""Reading `.github/ci-stability.yml` nodes into values, and collecting their errors.

PyYAML is imported in the functions that read YAML, not at the top: importing it
(with the regexes it compiles) is ~20 ms that every review without a config file, and
every other command importing `Config`, would pay for nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


MAX_DEPTH = 64  # far beyond any real config; well inside Python's recursion limit
MAX_ALIASES = 100


def check_shape(text: str, source: str) -> None:
    """Refuse, before composing, YAML that composing or converting would choke on.

    PyYAML's composer recurses once per nesting level (1,000 levels: RecursionError)
    and builds recursive aliases (`a: &a [*a]`) into cyclic graphs; the event stream
    is read iteratively, so depth, alias count and recursion are measured on it.
    """
    import yaml  # lazy: see the module docstring
    depth = 0
    aliases = 0
    open_anchors: list[str | None] = []
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise _at(event, source, f"nested more than {MAX_DEPTH} levels deep")
            open_anchors.append(event.anchor)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            open_anchors.pop()
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if event.anchor in open_anchors:
                raise _at(event, source, f"recursive alias `*{event.anchor}` (it refers to "
                          "a value that contains it)")
            if aliases > MAX_ALIASES:
                raise _at(event, source, f"more than {MAX_ALIASES} aliases")


def _at(event: yaml.Event, source: str, message: str) -> ConfigError:
    mark = event.start_mark
    return ConfigError(f"{source}:{mark.line + 1 if mark else '?'}: {message}")


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

    def plain(self, node: yaml.Node, key: str, depth: int = 0) -> Any:
        """Convert a node to Python data with a node budget (no alias bombs) and a
        depth bound (aliases to aliases nest deeper than the text shows)."""
        import yaml  # lazy: see the module docstring
        self.visited += 1
        if self.visited > self.max_nodes:
            raise Exhausted(f"{self.source}:{node.start_mark.line + 1}: `{key}`: "
                            "too many values (aliases expand too far)")
        if depth > MAX_DEPTH:
            raise Exhausted(f"{self.source}:{node.start_mark.line + 1}: `{key}`: "
                            f"nested more than {MAX_DEPTH} levels deep (through aliases)")
        if isinstance(node, yaml.ScalarNode):
            try:
                return yaml.constructor.SafeConstructor().construct_object(node)
            except (yaml.YAMLError, ValueError, OverflowError) as exc:
                # e.g. `!!timestamp 2024-99-99` or `!!int` on text: a value, not a crash
                raise self.fail(node, key, f"not a valid value: {exc}") from None
        if isinstance(node, yaml.SequenceNode):
            return [self.plain(item, key, depth + 1) for item in node.value]
        if isinstance(node, yaml.MappingNode):
            items = [(self.plain(k, key, depth + 1), self.plain(v, key, depth + 1))
                     for k, v in node.value]
            try:
                return dict(items)
            except TypeError:  # a list or mapping used as a key
                raise self.fail(node, key, "keys must be plain values") from None
        raise self.fail(node, key, "unsupported YAML value")

    def mapping(self, node: yaml.Node, key: str) -> list[tuple[str, yaml.Node, yaml.Node]]:
        import yaml  # lazy: see the module docstring
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
        import yaml  # lazy: see the module docstring
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
    import difflib  # only for a misspelt name: every review imports this module

    guesses = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean `{guesses[0]}`?)" if guesses else ""
