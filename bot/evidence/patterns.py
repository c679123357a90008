"""The root-cause pattern catalog (`patterns.json`), compiled once per process.

The catalog is data so that adding a failure signature needs no code change. Each
pattern names its category, a rank (deeper causes rank higher), whether it is a
*surface* symptom, and lowercase *anchors*: literals every match must contain. The
anchors feed the streaming prefilter, which looks at whole chunks of the log and only
hands lines containing an anchor to the (much slower) per-line regexes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from bot.evidence.multimatch import BranchFilter

CATALOG_RESOURCE = "patterns.json"
# A GitHub Actions / Buildkite timestamp as it appears in a raw log; the grep export
# allows it before `^`-anchored patterns because grep sees lines before stripping.
_GREP_LINE_PREFIX = r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z |\[[0-9T:.-]+Z] )?"


@dataclass(frozen=True)
class Alternative:
    """One top-level `|` branch of a pattern, tried only when its anchors are present."""

    regex: re.Pattern[str]
    anchors: frozenset[str]


@dataclass(frozen=True)
class Pattern:
    id: str
    category: str
    rank: int
    surface: bool
    regex: re.Pattern[str]
    anchors: frozenset[str]
    examples: tuple[str, ...]
    alternatives: tuple[Alternative, ...]


@dataclass(frozen=True)
class Literal:
    """A prefilter literal; the gates skip identifier and flag contexts around it."""

    text: str
    not_followed_by: tuple[str, ...] = ()
    not_preceded_by: tuple[str, ...] = ()

    @property
    def gated(self) -> bool:
        return bool(self.not_followed_by or self.not_preceded_by)

    def guard(self) -> str:
        """Assertions to put right *after* the literal (keeping its literal prefix)."""
        guard = ""
        if self.not_followed_by:
            guard += "(?!" + "|".join(re.escape(s) for s in self.not_followed_by) + ")"
        for before in self.not_preceded_by:
            guard += "(?<!" + re.escape(before + self.text) + ")"
        return guard


@dataclass(frozen=True)
class Match:
    """How one line was classified; `key` is the part of the line that identifies it."""

    pattern: Pattern
    key: str | None


class CatalogError(ValueError):
    """The catalog file is malformed (a packaging or editing mistake, caught by tests)."""


@dataclass(frozen=True)
class Catalog:
    patterns: tuple[Pattern, ...]
    categories: tuple[str, ...]
    min_cause_rank: int
    anchors: tuple[str, ...]
    prefilter_literals: tuple[Literal, ...]
    # Lines that look like failures but are not (source echoed in a traceback).
    ignore: re.Pattern[str] | None = None
    # Every (pattern, alternative) in catalog order, and for each anchor the
    # positions in it of the alternatives that need the anchor.
    _branches: tuple[tuple[Pattern, Alternative], ...] = ()
    _by_anchor: tuple[tuple[str, re.Pattern[str] | None, frozenset[int]], ...] = ()
    _gates: tuple[tuple[tuple[str, re.Pattern[str] | None], ...], ...] = ()  # per branch

    def classify(self, text: str, may_match: BranchFilter | None = None) -> Match | None:
        """The first pattern (in catalog order) matching the stripped line `text`.

        `may_match` (an RE2 set of `branch_regexes`) narrows the branches to search;
        with or without it, the answer is the same.
        """
        lowered = text.lower()
        todo: set[int] = set()
        possible = None if may_match is None else may_match(text)
        if possible is not None:  # few branches: check only their anchors
            todo = {i for i in possible if any(
                a in lowered and (g is None or g.search(lowered)) for a, g in self._gates[i])}
        else:
            for anchor, gate, positions in self._by_anchor:
                if anchor in lowered and (gate is None or gate.search(lowered)):
                    todo |= positions
        if not todo or (self.ignore is not None and self.ignore.search(text)):
            return None
        for position in sorted(todo):
            pattern, alternative = self._branches[position]
            found = alternative.regex.search(text)
            if found is not None:
                return Match(pattern, found.groupdict().get("key"))
        return None

    def branch_regexes(self) -> tuple[str, ...]:
        """Every branch's regex, indexed as `classify`'s `may_match` positions."""
        return tuple(alternative.regex.pattern for _, alternative in self._branches)

    def prefilter(self) -> tuple[re.Pattern[bytes], ...]:
        """Bytes regexes over *lowercased* log data that together find every anchor.

        One regex per first character of the catalog's `prefilter` literals: a regex
        with a literal prefix is searched by Python's engine with a fast byte loop,
        while a single alternation of all literals would start with a character set,
        which is checked byte by byte about ten times slower.
        """
        return _prefilter_regexes(self.prefilter_literals)


def _trie(words: list[tuple[str, str]]) -> str:
    """An alternation of (literal, trailing guard) factored by common prefixes."""
    ended = [guard for rest, guard in words if not rest]
    if "" in ended:  # an unguarded literal already matches here
        return ""
    branches: dict[str, list[tuple[str, str]]] = {}
    for rest, guard in words:
        if rest:
            branches.setdefault(rest[0], []).append((rest[1:], guard))
    alternatives = ended + [
        re.escape(first) + _trie(tails) for first, tails in sorted(branches.items())
    ]
    return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"


@cache
def _prefilter_regexes(literals: tuple[Literal, ...]) -> tuple[re.Pattern[bytes], ...]:
    # A literal containing an unguarded one adds nothing: the shorter one already hits.
    plain = [w.text for w in literals if not w.gated]
    needed = [w for w in literals if not any(v != w.text and v in w.text for v in plain)]
    groups: dict[str, list[tuple[str, str]]] = {}
    for literal in needed:
        groups.setdefault(literal.text[0], []).append((literal.text, literal.guard()))
    return tuple(re.compile(_trie(group).encode()) for _, group in sorted(groups.items()))


def _anchor_gate(anchor: str, literals: tuple[Literal, ...]) -> re.Pattern[str] | None:
    """The gated literal an anchor relies on, or None when an ungated one covers it."""
    inside = [w for w in literals if w.text in anchor]
    if not inside or any(not w.gated for w in inside):
        return None
    return re.compile("|".join(re.escape(w.text) + w.guard() for w in inside))


def split_alternatives(regex: str) -> list[str]:
    """The top-level `|` branches of `regex` (outside groups and character classes)."""
    branches: list[str] = []
    depth, start, i, in_class = 0, 0, 0, False
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 1 + (regex[i + 1 : i + 2] == "^")
            i += regex[i : i + 1] == "]"  # a `]` right after `[` or `[^` is literal
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            branches.append(regex[start:i])
            start = i + 1
        i += 1
    branches.append(regex[start:])
    return branches


def _literal(raw: str | dict[str, Any]) -> Literal:
    if isinstance(raw, str):
        return Literal(raw)
    return Literal(
        str(raw["literal"]),
        tuple(str(s) for s in raw.get("not_followed_by", ())),
        tuple(str(s) for s in raw.get("not_preceded_by", ())),
    )


def _compile(raw: dict[str, Any], categories: tuple[str, ...]) -> Pattern:
    try:
        pattern_id = str(raw["id"])
        category = str(raw["category"])
        anchors = frozenset(str(a) for a in raw["anchors"])
        compiled = re.compile(str(raw["regex"]))
        rank = int(raw["rank"])
    except (KeyError, TypeError, ValueError, re.error) as exc:
        raise CatalogError(f"bad catalog entry {raw!r}: {exc}") from exc
    if category not in categories:
        raise CatalogError(f"{pattern_id}: unknown category {category!r}")
    if not anchors or any(a != a.lower() or not a for a in anchors):
        raise CatalogError(f"{pattern_id}: anchors must be non-empty lowercase literals")
    # A branch needs the anchors spelled out in it; one that spells none (e.g.
    # "[Aa]borted") is tried whenever any anchor of the pattern is present. Branches
    # needing the same anchors are searched together: each search has a fixed cost.
    by_anchors: dict[frozenset[str], list[str]] = {}
    for branch in split_alternatives(compiled.pattern):
        spelled = frozenset(a for a in anchors if a in branch.lower())
        by_anchors.setdefault(spelled or anchors, []).append(branch)
    alternatives = [
        Alternative(re.compile("|".join(branches)), needs)
        for needs, branches in by_anchors.items()
    ]
    return Pattern(
        id=pattern_id,
        category=category,
        rank=rank,
        surface=bool(raw.get("surface", False)),
        regex=compiled,
        anchors=anchors,
        examples=tuple(str(e) for e in raw.get("examples", ())),
        alternatives=tuple(alternatives),
    )


def parse_catalog(data: dict[str, Any]) -> Catalog:
    categories = tuple(str(c) for c in data["categories"])
    patterns = tuple(_compile(raw, categories) for raw in data["patterns"])
    ids = [p.id for p in patterns]
    if len(set(ids)) != len(ids):
        raise CatalogError("duplicate pattern ids")
    anchors = tuple(sorted({a for p in patterns for a in p.anchors}))
    literals = tuple(sorted((_literal(w) for w in data["prefilter"]), key=lambda w: w.text))
    uncovered = [a for a in anchors if not any(w.text in a for w in literals)]
    # Gates are checked on lowercased text (and case-insensitively by Hyperscan).
    spelt = [s for w in literals for s in (w.text, *w.not_followed_by, *w.not_preceded_by)]
    if uncovered or not all(s and s == s.lower() and "\n" not in s for s in spelt):
        raise CatalogError(f"prefilter literals must be lowercase and cover {uncovered}")
    ignore = re.compile(str(data["ignore"])) if data.get("ignore") else None
    branches = tuple((p, alt) for p in patterns for alt in p.alternatives)
    by_anchor = tuple(
        (
            a,
            _anchor_gate(a, literals),
            frozenset(i for i, (_, alt) in enumerate(branches) if a in alt.anchors),
        )
        for a in anchors
    )
    gates = tuple(
        tuple((a, gate) for a, gate, positions in by_anchor if i in positions)
        for i in range(len(branches))
    )
    return Catalog(
        patterns, categories, int(data["min_cause_rank"]), anchors, literals, ignore,
        branches, by_anchor, gates,
    )


@cache
def load_catalog() -> Catalog:
    """The packaged catalog."""
    package = resources.files(__package__ or "bot.evidence")
    text = package.joinpath(CATALOG_RESOURCE).read_text("utf-8")
    return parse_catalog(json.loads(text))


def to_grep_ere(regex: str) -> str:
    """A catalog regex in GNU `grep -E` syntax (the catalog avoids constructs ERE lacks)."""
    ere = regex.replace("(?P<key>", "(").replace("(?:", "(").replace(r"\d", "[0-9]")
    ere = ere.replace(r"\]", "]")  # a lone `]` is literal in ERE; GNU grep warns on `\]`
    # `^` outside a bracket expression anchors the line, which in a raw log starts with
    # a timestamp that our extractor strips first.
    return re.sub(r"(?<!\[)\^", lambda _: "^" + _GREP_LINE_PREFIX, ere)


def grep_patterns(catalog: Catalog | None = None) -> list[str]:
    """One `grep -E` pattern per catalog entry, in catalog order."""
    return [to_grep_ere(p.regex.pattern) for p in (catalog or load_catalog()).patterns]
