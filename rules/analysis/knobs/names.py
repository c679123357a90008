"""Knob names: how a name compares, and which words of a text may name a wanted knob.

Names are globs from the config (`*timeout*`, `rtol`); the filter is asked about every
word of every hunk side, so its answers are memoized and plain names skip the regex.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from functools import lru_cache
from typing import Literal

from bot.core.globs import compile_glob
from rules.analysis.knobs.run_scanner import literal_pieces, run_scanner

_NAME_TOKEN_RE = re.compile(r"[A-Za-z][\w-]*")
_WORD_NAME_RE = re.compile(r"[a-z][a-z0-9-]*")


@lru_cache(maxsize=8192)
def normalize(name: str) -> str:
    """Knob names compare lowercase, with `_` as `-` and no leading dashes."""
    return name.strip().lstrip("-").lower().replace("_", "-")


class KnobFilter:
    """Which normalized knob names are wanted, plus a fast test for candidate lines."""

    __slots__ = ("_exact", "_hits", "_literal", "_names", "_pieces", "_scan", "_seen",
                 "_value")

    def __init__(self, globs: Sequence[str]) -> None:
        normalized = [g.strip().lower().replace("_", "-") for g in globs if g.strip()]
        # Most knobs are plain names: a set lookup, and a much smaller regex to build
        # and run for the globs proper.
        self._literal = frozenset(g for g in normalized if not any(c in g for c in "*?{"))
        patterns = [compile_glob(g).pattern for g in normalized if g not in self._literal]
        self._exact = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None
        self._seen: set[str] = set()  # raw runs looked at
        self._hits: dict[str, str] = {}  # those whose word may name a wanted knob → it
        self._names: dict[str, bool] = {}  # normalized names
        self._value = self("metric-value")  # lm-eval `value:` keys become `metric-value`
        self._pieces = literal_pieces(normalized)
        if self._pieces is not None and self._value:
            self._pieces.add("value")
        # The runs that may name a wanted knob, compiled when `present` is first asked.
        self._scan: Callable[[str], list[str]] | Literal[False] | None = False

    def __call__(self, name: str) -> bool:
        hit = self._names.get(name)
        if hit is None:
            if len(self._names) > 100_000:
                self._names.clear()
            hit = self._names[name] = name in self._literal or (
                self._exact is not None and self._exact.match(name) is not None)
        return hit

    def names_knob(self, word: str) -> bool:
        """Whether a word as written (`max_num_seqs`, `Timeout`) may name a wanted knob."""
        name = word.lower().replace("_", "-")
        return self(name) or (self._value and name == "value")

    def present(self, text: str) -> list[str]:
        """The words of `text` that may name a wanted knob, as written (memoized)."""
        if len(self._seen) > 100_000:
            self._seen.clear()
            self._hits.clear()
        # Only the runs holding a wanted name's literal piece can hit, found in one
        # compiled pass; the per-run steps below are unchanged.
        scan = self._scan
        if scan is False:
            scan = self._scan = run_scanner(self._pieces)
        runs = set(scan(text)) if scan is not None and text.isascii() else _runs(text)
        hits, names = self._hits, self._names
        # Set operations keep the per-token Python work to runs never seen before; a
        # run is looked at once, whatever it starts with (see `_word`). `_word` and
        # `names_knob` are inlined: this loop runs for every new word of a large PR.
        fresh = runs - self._seen
        for run in fresh:
            word = run if run[0].isalpha() else run.lstrip(_NOT_LETTER_LEAD)
            if not word:
                continue
            name = word.lower().replace("_", "-")
            hit = names.get(name)
            if hit is None:
                hit = self(name)
            if hit or (self._value and name == "value"):
                hits[run] = word
        self._seen.update(fresh)
        return list({hits[run] for run in runs & hits.keys()})


# ASCII text splits into `[\w-]` runs at C speed: every other character becomes a space.
_NOT_WORD = str.maketrans({c: " " for c in range(128)
                           if not (chr(c).isalnum() or chr(c) in "_-")})
_NOT_LETTER_LEAD = "0123456789_-"


def _runs(text: str) -> set[str]:
    r"""The distinct runs of `[\w-]` in `text` (ASCII), or its `_NAME_TOKEN_RE` words:
    either way `_word` of each gives the words `_NAME_TOKEN_RE` finds."""
    if not text.isascii():
        return set(_NAME_TOKEN_RE.findall(text))
    return set(text.translate(_NOT_WORD).split())


def _word(run: str) -> str:
    """The word of a run: the part from its first ASCII letter on ("" when none)."""
    return run if run[0].isalpha() else run.lstrip(_NOT_LETTER_LEAD)


@lru_cache(maxsize=64)
def knob_filter(globs: tuple[str, ...]) -> KnobFilter:
    """A predicate over normalized names from a glob list (`*timeout*`, `rtol`)."""
    return KnobFilter(globs)


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_" or ch == "-"  # `[\w-]`


def named_words(text: str, only: Container[str]) -> list[str] | None:
    r"""The words of `text` (as `present` finds them) that normalize to a name in `only`
    (or to `value` when `metric-value` is wanted), found by searching for the names
    instead of splitting the whole text into words; None when that can't be exact.

    Lowercasing then lines up character for character with the text (same length),
    and a word is a run of `[\w-]` from its first ASCII letter on.
    """
    if not isinstance(only, (set, frozenset)) or not all(name.isascii() for name in only):
        return None
    normalized = text.lower().replace("_", "-")
    if len(normalized) != len(text):
        return None
    names = set(only)
    if "metric-value" in names:
        names.add("value")
    found: set[str] = set()
    size = len(text)
    for name in names:
        if not _WORD_NAME_RE.fullmatch(name):
            continue  # no word normalizes to it: a letter, then letters, digits or `-`
        at = normalized.find(name)
        while at >= 0:
            end = at + len(name)
            if text[at].isascii() and (end == size or not _is_word_char(text[end])):
                back = at - 1
                while back >= 0 and _is_word_char(text[back]) and not (
                        text[back].isascii() and text[back].isalpha()):
                    back -= 1
                if back < 0 or not _is_word_char(text[back]):
                    found.add(text[at:end])  # no earlier letter in the run: a word here
            at = normalized.find(name, at + 1)
    return list(found)
