"""The catalog on a compiled multi-pattern engine (Hyperscan), with a pure-Python fallback.

Finding the lines worth classifying is the cost of a large log: every byte is looked
at. Python's engine needs the chunk lowercased and one pass per first character of
the prefilter literals (`scan.RegexLineFinder`); Hyperscan finds all of them,
case-insensitively, in one pass over the raw chunk. Both finders return the same
line starts (tests/evidence/test_engine_parity.py), so everything downstream is the
same whichever runs.

Hyperscan has no lookaround, so a literal's gates (`xcept` not followed by `ions`,
`fail` not preceded by `x`) are spelt as what may follow or precede instead:
`xcept(?:[^i]|i(?:[^o]|o(?:[^n]|n[^s_])))`. A chunk's lines always end in a newline,
which no gate string contains, so a complement class always has a character to match.

Each candidate line is then classified (`Catalog.classify`): of the catalog's regex
branches whose anchors it holds, the first that matches wins. RE2's `Set` tells in
one pass which branches can match (`Re2BranchFilter`), so Python's engine runs once
to confirm and read the `key` group instead of once per branch. RE2 compiles the
catalog in milliseconds; Hyperscan needs about a second for it, more than it saves
a command-line run. RE2's `\\d`, `\\w`, `\\b` are ASCII-only where Python's are
Unicode, so a line with non-ASCII text, or one long enough that RE2's DFA could
give up on it, is classified by Python alone; a branch RE2 cannot parse is always
tried by Python.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Iterable
from typing import Any, Literal, Protocol


def _optional(name: str) -> Any:
    """The module, or None: the engines are optional, the pure-Python paths do the same job."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


hyperscan: Any = _optional("hyperscan")
re2: Any = _optional("re2")

# auto: the compiled engines where installed; compiled: those or an error; python: none.
Engine = Literal["auto", "compiled", "python"]
ENGINES: tuple[Engine, ...] = ("auto", "compiled", "python")
# A line with this many hits stops the scan, which resumes after it: a 450 KB line of
# `error`s would otherwise call back once per occurrence.
_HITS_PER_LINE = 4


class LineFinder(Protocol):
    """Sorted start offsets of the lines in body[:stop] holding a prefilter literal."""

    name: str

    def __call__(self, body: bytes, stop: int) -> list[int]: ...


class BranchFilter(Protocol):
    """Positions of the catalog branches that may match `text`; None: try them all."""

    def __call__(self, text: str) -> frozenset[int] | None: ...


class EngineUnavailable(RuntimeError):
    """A compiled engine was demanded but cannot be imported or compiled here."""


def engines_available() -> bool:
    return hyperscan is not None and re2 is not None


def _class(chars: Iterable[str]) -> str:
    return "[^" + "".join(re.escape(c) for c in sorted(set(chars))) + "]"


def not_followed_by(strings: Iterable[str]) -> str:
    """A regex for the text after a literal that starts with none of `strings`."""
    tails = [s for s in strings if s]
    if not tails:
        return ""
    alternatives = [_class(t[0] for t in tails)]
    for first in sorted({t[0] for t in tails}):
        rest = [t[1:] for t in tails if t[0] == first]
        if "" not in rest:  # `first` completes a forbidden string: no branch through it
            alternatives.append(re.escape(first) + not_followed_by(rest))
    return "(?:" + "|".join(alternatives) + ")"


def not_preceded_by(strings: Iterable[str]) -> str:
    """A regex for the text before a literal that ends with none of `strings`."""
    tails = [s for s in strings if s]
    if not tails:
        return ""
    alternatives = ["^", _class(t[-1] for t in tails)]
    for last in sorted({t[-1] for t in tails}):
        rest = [t[:-1] for t in tails if t[-1] == last]
        if "" not in rest:
            alternatives.append(not_preceded_by(rest) + re.escape(last))
    return "(?:" + "|".join(alternatives) + ")"


def literal_expression(text: str, after: Iterable[str] = (), before: Iterable[str] = ()) -> str:
    """A gated prefilter literal as a lookaround-free regex."""
    return not_preceded_by(before) + re.escape(text) + not_followed_by(after)


class HyperscanLineFinder:
    """All prefilter literals in one case-insensitive Hyperscan pass over a raw chunk."""

    name = "hyperscan"

    def __init__(self, expressions: list[str]) -> None:
        if hyperscan is None:
            raise EngineUnavailable("the hyperscan module is not installed")
        self._database: Any = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        try:
            self._database.compile(
                expressions=[e.encode() for e in expressions],
                ids=list(range(len(expressions))),
                elements=len(expressions),
                flags=hyperscan.HS_FLAG_CASELESS,
            )
        except hyperscan.error as exc:
            raise EngineUnavailable(f"hyperscan rejected the prefilter: {exc}") from exc
        # Scratch space is per thread: job logs are analysed in worker threads.
        self._local = threading.local()

    def _scratch(self) -> Any:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self._database)
        return scratch

    def __call__(self, body: bytes, stop: int) -> list[int]:
        starts: list[int] = []
        repeats = [0]

        def on_match(_id: int, _from: int, end: int, _flags: int, base: int) -> bool:
            end += base
            # end - 1 is inside the hit's line or is the newline ending it.
            start = body.rfind(b"\n", 0, end - 1) + 1
            if starts and starts[-1] == start:
                repeats[0] += 1
                return repeats[0] >= _HITS_PER_LINE
            repeats[0] = 0
            starts.append(start)
            return False

        view = memoryview(body)[:stop]
        scratch = self._scratch()
        base = 0
        while base < stop:
            try:
                self._database.scan(view[base:], match_event_handler=on_match, context=base,
                                    scratch=scratch)
            except hyperscan.ScanTerminated:
                base = body.find(b"\n", starts[-1], stop) + 1
                repeats[0] = 0
                continue
            break
        # Matches come in order of end offset, so the starts are sorted already, but
        # a gate's complement may end a match later than a shorter one on that line.
        return sorted(set(starts))


def hyperscan_finder(literals: Iterable[tuple[str, tuple[str, ...], tuple[str, ...]]]
                     ) -> HyperscanLineFinder:
    """The finder for (text, not_followed_by, not_preceded_by) literals."""
    return HyperscanLineFinder([literal_expression(t, a, b) for t, a, b in literals])


# Lines longer than this skip RE2: its DFA may bail out on them, which a Set reports
# as "no match" (a miss, not an error).
RE2_MAX_LINE = 2048
_RE2_MAX_MEM = 32 << 20


class Re2BranchFilter:
    """The catalog's regex branches as one RE2 `Set`."""

    name = "re2"

    def __init__(self, regexes: Iterable[str]) -> None:
        if re2 is None:
            raise EngineUnavailable("the re2 module (google-re2) is not installed")
        options = re2.Options()
        options.log_errors = False
        options.max_mem = _RE2_MAX_MEM
        self._set: Any = re2.Set.SearchSet(options)
        self._positions: list[int] = []  # set index -> branch position
        unsupported: set[int] = set()
        for position, regex in enumerate(regexes):
            try:
                self._set.Add(regex)
            except re2.error:
                unsupported.add(position)
                continue
            self._positions.append(position)
        self._set.Compile()
        self.unsupported = frozenset(unsupported)

    def __call__(self, text: str) -> frozenset[int] | None:
        if len(text) > RE2_MAX_LINE or not text.isascii():
            return None
        found = self._set.Match(text) or ()
        return frozenset(self._positions[i] for i in found) | self.unsupported
