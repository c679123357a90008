"""Knobs the description names the way people write them: by abbreviation (`TP4`,
`mem fraction`), in words (`maximum model length` for `max_model_len`, `maximum number
of sequences`), or by the change itself (`TP4 → TP2`, `max-model-len 4096 -> 8192`).

A description often lists its changes as bullets ("- Change TP4 ---> TP2") and gives
the purpose once, in the title or another sentence ("to speed up CI"). The bullet
names this very change and the PR says why it makes its changes, so the knob is
explained. A bare abbreviation without a value in a bullet explains nothing unless
its own sentence gives the reason, as for a knob named in full.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from rules.analysis.knobs import Change, normalize
from rules.analysis.prtext import gives_reason
from rules.knob_rationale.judging import FIX_ACCOUNT

# Normalized knob names (`_` as `-`) → the short names descriptions use for them.
_ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "tensor-parallel-size": ("tp",),
    "pipeline-parallel-size": ("pp",),
    "data-parallel-size": ("dp",),
    "expert-parallel-size": ("ep",),
    "context-parallel-size": ("cp",),
    "prefill-context-parallel-size": ("pcp",),
    "decode-context-parallel-size": ("dcp",),
    "batch-size": ("bs",),
    "max-batch-size": ("bs", "max bs"),
    "gpu-memory-utilization": ("mem fraction", "memory utilization", "gpu util", "gmu"),
    "mem-fraction-static": ("mem fraction", "memory fraction"),
    "max-model-len": ("max len", "model len", "context length", "max length"),
    "max-num-seqs": ("max seqs", "num seqs"),
    "max-num-batched-tokens": ("batched tokens", "mnbt"),
    "max-concurrency": ("concurrency",),
}
# The purposes a PR states for retuning CI (beyond the failure words of a reason).
_PURPOSE_RE = re.compile(
    r"\b(?:speed(?:s|ing)? up|faster|shorten\w*|(?:reduce|cut|save)s?\b[^.\n]{0,30}"
    r"\b(?:time|cost|resources?|cards?|npus?|gpus?|nodes?)|run ?time|runtime|duration|"
    r"fit(?:s|ting)? (?:on|in|into)|(?:not|n't) enough|insufficient|limited)\b",
    re.I,
)
_ARROW = r"\s*(?:-+>|→|=>|⇒|\bto\b)\s*"
_LINE_RE = re.compile(r"[^\n]+")
# Unlike lines, sentences end at `.`, `!`, `?` or `;` (as `description_explains` reads).
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?;])\s+")


# The words a knob's name abbreviates, as prose spells them out.
_SPELLED: dict[str, str] = {
    "max": "maximum", "min": "minimum", "len": "length", "num": "number of",
    "seqs": "sequences", "mem": "memory", "util": "utilization", "frac": "fraction",
}
_MAX_SPELLINGS = 8


def abbreviations(name: str) -> tuple[str, ...]:
    """The short names of a knob (normalized name), e.g. `tp` for tensor_parallel_size."""
    return _ABBREVIATIONS.get(normalize(name), ())


@lru_cache(maxsize=1024)
def spelled(name: str) -> tuple[str, ...]:
    """The knob's name in words, its abbreviated words spelled out in full or not
    (`maximum model length`, `max model length` for max-model-len); () when no word of
    it is an abbreviation."""
    words = [w for w in normalize(name).split("-") if w]
    if len(words) < 2 or not any(w in _SPELLED for w in words):
        return ()
    found = [""]
    for word in words:
        forms = (word, _SPELLED[word]) if word in _SPELLED else (word,)
        found = [f"{head} {form}".strip() for head in found for form in forms][:_MAX_SPELLINGS * 2]
    return tuple(f for f in found if f != " ".join(words))[:_MAX_SPELLINGS]


def _quoted(line: str) -> str:
    return line if len(line) <= 200 else line[:197] + "..."


@lru_cache(maxsize=1024)
def _short_name(short: str) -> re.Pattern[str]:
    """A short name as a word of its own, or glued to a value (`TP4`, `tp=4`)."""
    spaced = r"[\s_-]+".join(map(re.escape, short.split()))
    return re.compile(rf"(?<![\w-]){spaced}(?:\s*[=:]?\s*\d[\d.]*)?(?![\w-])", re.I)


def _value_pattern(value: str) -> str:
    return rf"{re.escape(value)}(?!\w|\.\d)"  # what precedes it is the knob's name


def _reasoned(sentence: str, names: Sequence[re.Pattern[str]]) -> bool:
    """A reason or purpose in the sentence, the knob's own words aside (`memory` in
    "GPU memory utilization" is its name, no reason)."""
    for pattern in names:
        sentence = pattern.sub(" ", sentence)
    return (gives_reason(sentence) or _PURPOSE_RE.search(sentence) is not None
            or FIX_ACCOUNT.search(sentence) is not None)


@lru_cache(maxsize=1024)  # asked for every reported change: a PR repeats a few names
def _name_pattern(name: str) -> re.Pattern[str]:
    words = [w for w in re.split(r"[\s_-]+", name) if w]
    return re.compile(r"[\s_-]*".join(map(re.escape, words)), re.I)


class Mentions:
    """Whether the PR text names a knob change by abbreviation or by its values."""

    def __init__(self, text: str) -> None:
        self.text = text[:200_000]
        self._lines = [m.group().strip() for m in _LINE_RE.finditer(self.text)]
        self._lines = [line for line in self._lines if line]
        self._purpose: dict[str, bool] = {}

    def explains(self, change: Change) -> str | None:
        new = change.new
        if new is None or not self._lines:
            return None  # a PR text without a line names nothing
        shorts = (*abbreviations(new.name), *spelled(new.name))
        own = [_name_pattern(n) for n in dict.fromkeys((new.raw, new.name, *shorts)) if n]
        # The knob's own name too: a fix's account beside it is a reason here.
        found = self._short_with_reason((*shorts, new.name.replace("-", " ")), own)
        if found is None:
            listed = self._listed(change, shorts)
            if listed is not None and self._states_purpose(new.name, own):
                found = listed
        return found

    def _short_with_reason(self, shorts: Sequence[str],
                           own: Sequence[re.Pattern[str]]) -> str | None:
        """A sentence naming the knob by a short name and giving a reason, as a
        sentence naming it in full would."""
        patterns = [_short_name(s) for s in shorts]
        for line in self._lines:
            if not any(p.search(line) for p in patterns):
                continue
            for sentence in _SENTENCE_SPLIT_RE.split(line):
                if any(p.search(sentence) for p in patterns) and _reasoned(sentence, own):
                    return _quoted(sentence)
        return None

    def _listed(self, change: Change, shorts: Sequence[str]) -> str | None:
        """A line naming this change: the knob (in full or short) with its new value,
        glued to it or after an arrow from its old value."""
        new = change.new
        assert new is not None
        value = new.value.strip("'\"")
        if not value or not any(ch.isdigit() for ch in value):
            return None
        old = change.old.value.strip("'\"") if change.old is not None else ""
        names = dict.fromkeys((new.raw, new.name, *shorts))
        for line in self._lines:
            if value in line and any(_names_value(line, name, old, value) for name in names):
                return _quoted(line)
        return None

    def _states_purpose(self, name: str, own: Sequence[re.Pattern[str]]) -> bool:
        """Whether the PR gives a reason or purpose for its changes anywhere."""
        if name not in self._purpose:
            self._purpose[name] = any(_reasoned(line, own) for line in self._lines)
        return self._purpose[name]


def _names_value(line: str, name: str, old: str, value: str) -> bool:
    words = [w for w in re.split(r"[\s_-]+", name) if w]
    if not words:
        return False
    spaced = r"[\s_-]*".join(map(re.escape, words))
    knob = rf"(?<![\w-])-{{0,2}}{spaced}"
    new = _value_pattern(value)
    # TP2, tp=2, --max-model-len 8192, max_model_len to 8192
    patterns = [rf"{knob}(?:\s*[=:]?\s*|\s+to\s+){new}"]
    if old:
        # TP4 → TP2, tp 4 to 2, max-model-len 4096 -> 8192
        before = _value_pattern(old)
        patterns.append(rf"{knob}\s*[=:]?\s*{before}{_ARROW}(?:{spaced}\s*[=:]?\s*)?{new}")
    return any(re.search(p, line, re.I) for p in patterns)
