"""Knob settings in a diff: which tuning values a hunk sets, and what they were before.

Shared by knob-rationale, threshold-loosening and shard-matrix. A knob is recognised
written as a YAML/JSON key (`max_concurrency: 100`), a flag inside a string or a
folded block scalar (`--max-num-batched-tokens 32768`, `--timeout=600`), Python/YAML
list items (`"--mem-fraction-static", "0.3"` on one line or on consecutive lines), a
keyword argument or assignment (`rtol=1e-3`, `TIMEOUT = 600`, `export TIMEOUT=600`),
or a key of a flow mapping (`{ shard: 1, num_shards: 5 }`). Each setting on an added
line is paired with the removed setting of the same name in the same hunk (by metric
label, then by order, then by position) so rules can say old → new.

Everything here is line-based and linear: no regex has nested quantifiers over user
text, and very long lines are cut before scanning.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from operator import itemgetter
from typing import NamedTuple, TypeVar, cast

from bot.config import Config
from bot.globs import compile_glob
from bot.snapshot import ChangedFile, Hunk, LineKind
from rules.support.explain import comment_text, description_explains
from rules.support.yamlscan import is_yaml, view

# (line number on this side, text, whether the line is added/removed rather than context)
SideLine = tuple[int, str, bool]

MAX_LINE = 20_000  # characters of one line that are scanned
_MAX_PAIRING = 8  # beyond this many same-name settings per side, pair by order only

_NAME_TOKEN_RE = re.compile(r"[A-Za-z][\w-]*")
_FLAG_RE = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*)")
_TOKEN_RE = re.compile(r"[^\s\"'`,;)\]}\\]+")
_YAML_KEY_RE = re.compile(r"^\s*(?:-\s+)?([\"']?)([A-Za-z_][\w.-]*)\1\s*:(?=\s|$)")
_QUOTED_KEY_RE = re.compile(r"([\"'])([A-Za-z_][\w.-]*)\1\s*:\s*")
_FLOW_KEY_RE = re.compile(r"[{,]\s*([A-Za-z_][\w-]*)\s*:\s")
_ASSIGN_RE = re.compile(r"(?<![\w$.-])([A-Za-z_][\w.]*)\s*=(?![=~])")
_PY_ANNOTATED_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*:\s*[A-Za-z_][\w.\[\], ]*=(?!=)")
_DEFAULT_KW_RE = re.compile(r"\bdefault\s*=\s*")
_VALUE_ONLY_RE = re.compile(r"^\s*(?:-\s+)?([\"']?)([^\s\"',#\[\]{}()=:]+)\1(?:\s*,)?(?:\s*\\)?$")
_KWARG_LINE_RE = re.compile(r"^\s*\w+\s*=[^=]")
_NAME_LINE_RE = re.compile(r"^\s*(?:-\s+)?name\s*:\s*[\"']?([^\"'#]*)")
_NUMBER_RE = re.compile(r"[+-]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_TRAILING_COMMENT_RE = re.compile(r"(?:^|\s)#")
_WORD_NAME_RE = re.compile(r"[a-z][a-z0-9-]*")
_WORD_LITERAL = frozenset({"true", "false", "none", "null"})
# A run of added lines that starts a new test, step or job: knobs in it are new, not retuned.
_NEW_UNIT_RE = re.compile(
    r"^\s*(?:(?:async\s+)?def\s|class\s|-\s+(?:label|name|key|id|group)\s*:|runs-on\s*:)"
)
# The same over added lines joined by newlines: `[^\S\n]` is `\s` kept within a line.
_NEW_UNIT_LINES_RE = re.compile(
    r"^[^\S\n]*(?:(?:async[^\S\n]+)?def[^\S\n]|class[^\S\n]"
    r"|-[^\S\n]+(?:label|name|key|id|group)[^\S\n]*:|runs-on[^\S\n]*:)", re.M)
_SHELL_KEYS = frozenset({"run", "script", "command", "commands", ""})
_PRAGMA_RE = re.compile(
    r"^(?:noqa|type:|fmt:|pragma|pylint:|nosec|isort:|yapf:|ruff:|mypy:|pyright:)", re.I
)
_CODE_COMMENT_RE = re.compile(r"^[\"']?-{0,2}[\w.-]+[\"']?\s*[:=,]\s*[\"']?[\w.+-]*[\"']?\s*,?$")
_REFERENCE_RE = re.compile(r"#\d+|https?://")
_WORD_RE = re.compile(r"[^\W\d_]{2,}")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_PENDING = "pending"


@lru_cache(maxsize=8192)
def normalize(name: str) -> str:
    """Knob names compare lowercase, with `_` as `-` and no leading dashes."""
    return name.strip().lstrip("-").lower().replace("_", "-")


class KnobFilter:
    """Which normalized knob names are wanted, plus a fast test for candidate lines."""

    __slots__ = ("_exact", "_hits", "_literal", "_names", "_seen", "_value")

    def __init__(self, globs: Sequence[str]) -> None:
        normalized = [g.strip().lower().replace("_", "-") for g in globs if g.strip()]
        # Most knobs are plain names: a set lookup, and a much smaller regex to build
        # and run for the globs proper.
        self._literal = frozenset(g for g in normalized if not any(c in g for c in "*?{"))
        patterns = [compile_glob(g).pattern for g in normalized if g not in self._literal]
        self._exact = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None
        self._seen: set[str] = set()  # raw words looked at
        self._hits: set[str] = set()  # those that may name a wanted knob
        self._names: dict[str, bool] = {}  # normalized names
        self._value = self("metric-value")  # lm-eval `value:` keys become `metric-value`

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
        tokens = _words(text)
        # Set operations keep the per-token Python work to words never seen before.
        for token in tokens - self._seen:
            if self.names_knob(token):
                self._hits.add(token)
            self._seen.add(token)
        return list(tokens & self._hits)


# ASCII text splits into `[\w-]` runs at C speed: every other character becomes a space.
_NOT_WORD = str.maketrans({c: " " for c in range(128)
                           if not (chr(c).isalnum() or chr(c) in "_-")})


def _words(text: str) -> set[str]:
    r"""The distinct `_NAME_TOKEN_RE` words of `text`: from each run of `[\w-]`, the part
    from its first ASCII letter on."""
    if not text.isascii():
        return set(_NAME_TOKEN_RE.findall(text))
    words = set()
    for run in set(text.translate(_NOT_WORD).split()):
        if run[0].isalpha():
            words.add(run)
        elif word := run.lstrip("0123456789_-"):
            words.add(word)
    return words


@lru_cache(maxsize=64)
def knob_filter(globs: tuple[str, ...]) -> KnobFilter:
    """A predicate over normalized names from a glob list (`*timeout*`, `rtol`)."""
    return KnobFilter(globs)


@lru_cache(maxsize=8192)
def number(value: str) -> float | None:
    """The value as a number when it is a plain numeric literal (quotes allowed)."""
    text = value.strip().strip("\"'")
    if not _NUMBER_RE.fullmatch(text):
        return None
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return None


def same_value(a: str, b: str) -> bool:
    x, y = number(a), number(b)
    if x is not None and y is not None:
        return x == y
    return a.strip().strip("\"'") == b.strip().strip("\"'")


class Setting(NamedTuple):
    name: str  # normalized
    raw: str  # as written, leading dashes stripped (for messages)
    value: str
    literal: bool  # a literal value, not a variable or an expression
    line: int  # the line to report: the changed one of name/value lines
    lines: tuple[int, ...]  # every line the setting spans
    changed: bool
    label: str = ""  # e.g. the metric a `value:` belongs to
    pos: int = 0  # position of the value line in its side of the hunk
    indent: int = 0  # of the value line: a job-level and a step-level key differ

    @property
    def shown(self) -> str:
        return self.value if self.literal or len(self.value) <= 40 else self.value[:37] + "..."


class Change(NamedTuple):
    """A setting on the head side and its base-side counterpart (either may be missing)."""

    old: Setting | None
    new: Setting | None

    @property
    def setting(self) -> Setting:
        found = self.new or self.old
        assert found is not None
        return found

    @property
    def is_change(self) -> bool:
        if self.new is None or self.old is None:
            return True
        return not same_value(self.old.value, self.new.value)

    def describe(self) -> str:
        s = self.setting
        if self.old is None:
            return f"{s.raw} (new) {s.shown}"
        if self.new is None:
            return f"{s.raw} {self.old.shown} → (removed)"
        return f"{s.raw} {self.old.shown} → {self.new.shown}"


def _scan_value(text: str, pos: int, words: bool) -> tuple[str, bool] | None:
    """(value, literal) at `pos`: a quoted string, a token, or a short expression."""
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos >= n:
        return None
    if text[pos] in "\"'":
        end = text.find(text[pos], pos + 1)
        return (text[pos + 1 : end][:200], True) if end > 0 else None
    match = _TOKEN_RE.match(text, pos)
    if match is None:
        return None
    token = match.group()
    after = match.end()
    while after < n and text[after] in " \t":
        after += 1
    # Arithmetic only in Python (`timeout=2 * 60`); in shell `X=5 -v` the `-` starts a flag.
    operator = not words and after < n and text[after] in "*/+-%"
    if operator or "(" in token or "[" in token or "{" in token:
        depth, end = 0, pos
        while end < n and end - pos < 80:
            ch = text[end]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif ch in ",;#" and depth == 0:
                break
            end += 1
        return text[pos:end].strip(), False
    if number(token) is not None:
        return token, True
    if token.lower() in _WORD_LITERAL:
        return token, True
    return token, words and "$" not in token and "{{" not in token


def _flag_value(code: str, start: int, end: int) -> tuple[str, bool] | str | None:
    """The value of the flag spanning code[start:end], `_PENDING`, or None (no value)."""
    quote = code[start - 1] if start > 0 and code[start - 1] in "\"'" else ""
    rest = code[end : end + 400]
    if rest.startswith("="):
        return _scan_value(code, end + 1, words=True)
    if quote and rest.startswith(quote):
        after = rest[1:].lstrip()
        if not after.startswith(","):
            return _PENDING if not after else None
        after = after[1:].lstrip()
        if not after or after == "\\":
            return _PENDING
        if after[0] in "\"'":
            return _scan_value(after, 0, words=True)
        value = _scan_value(after, 0, words=False)
        if value is None or number(value[0]) is None:
            return None
        return value
    if rest[:1] in (" ", "\t"):
        after = rest.lstrip()
        if not after or after == "\\":
            return _PENDING
        if after[0] == "-" and not (len(after) > 1 and (after[1].isdigit() or after[1] == ".")):
            return None
        if quote and after[0] == quote:
            return None
        return _scan_value(after, 0, words=True)
    return _PENDING if not rest and not quote else None


def _code(text: str) -> str:
    """The line without a trailing `#` comment, cut to a scannable length."""
    text = text[:MAX_LINE]
    if "#" not in text:
        return text
    match = _TRAILING_COMMENT_RE.search(text)
    return text[: match.start()] if match else text


def _label(side: Sequence[SideLine], i: int) -> str:
    """The metric name of a `value:` key (vLLM lm-eval `metrics: - name: … value: …`)."""
    for j in range(i - 1, max(-1, i - 4), -1):
        match = _NAME_LINE_RE.match(side[j][1][:400])
        if match:
            return match.group(1).strip()
    return ""


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_" or ch == "-"  # `[\w-]`


def _named_words(text: str, only: Container[str]) -> list[str] | None:
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


def _candidates(
    side: Sequence[SideLine], texts: list[str], joined: str, words: list[str]
) -> list[int]:
    """Indices of the lines that contain one of `words` and are changed or just above
    a change (a flag on a context line whose value line below it changed), in order.

    One regex pass over the side instead of one per line: the words hold no newline,
    so no match spans two lines.
    """
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words)))  # one cache entry per set
    starts = list(accumulate([len(t) + 1 for t in texts], initial=0))
    size = len(side)
    found: list[int] = []
    for match in pattern.finditer(joined):
        i = bisect_right(starts, match.start()) - 1
        if found and found[-1] == i:
            continue
        if any(side[j][2] for j in range(i, min(i + 4, size))):
            found.append(i)
    return found


def extract(
    side: Sequence[SideLine], wanted: KnobFilter, *, yaml_keys: bool, python: bool,
    only: Container[str] | None = None,
) -> list[Setting]:
    """Every wanted knob setting on one side of a hunk (context lines included).

    `only` limits the search to these normalized names (the base side only needs the
    names the head side changed, to pair them).
    """
    out: list[Setting] = []
    seen: set[tuple[str, int]] = set()
    pending: tuple[str, str, int, bool, int] | None = None  # name, raw, line, changed, age

    def add(name: str, raw: str, value: tuple[str, bool], i: int, extra: Setting | None = None,
            label: str = "") -> None:
        no, _, changed = side[i]
        lines: tuple[int, ...] = (no,)
        report = no
        if extra is not None:
            lines = (extra.line, no)
            changed = changed or extra.changed
            report = no if side[i][2] or not extra.changed else extra.line
        if (name, no) in seen:
            return
        seen.add((name, no))
        indent = len(side[i][1]) - len(side[i][1].lstrip())
        out.append(
            Setting(name, raw, value[0], value[1], report, lines, changed, label, i, indent)
        )

    texts, joined = side_text(side)
    named = _named_words(joined, only) if only is not None else None
    if named is not None:
        words = [w for w in named if wanted.names_knob(w)]
    else:
        words = wanted.present(joined)
        if only is not None:
            words = [w for w in words if (n := w.lower().replace("_", "-")) in only
                     or (n == "value" and "metric-value" in only)]
    if not words:
        return out
    visits = _candidates(side, texts, joined, words)
    size = len(side)
    k = 0
    i = -1
    while True:
        # A line naming a wanted word is read, and so is every line while a flag waits
        # for its value on a following line.
        if pending is None:
            while k < len(visits) and visits[k] <= i:
                k += 1
            if k == len(visits):
                break
            i = visits[k]
        else:
            i += 1
            if i >= size:
                break
        no, text, changed = side[i]
        stripped = text.lstrip()
        if not stripped or stripped.startswith("#"):
            continue  # comment lines never set anything; a pending flag survives them
        code = _code(text)
        if pending is not None:
            pname, praw, pline, pchanged, age = pending
            anchor = Setting(pname, praw, "", False, pline, (pline,), pchanged)
            value_only = _VALUE_ONLY_RE.match(code.rstrip())
            word = value_only.group(2) if value_only else None
            if value_only and word and (not word.startswith("-") or number(word) is not None):
                literal = bool(value_only.group(1)) or number(word) is not None or yaml_keys
                add(pname, praw, (word, literal), i, anchor)
                pending = None
                continue
            default = _DEFAULT_KW_RE.search(code) if python else None
            if default is not None:
                scanned = _scan_value(code, default.end(), words=False)
                if scanned is not None:
                    add(pname, praw, scanned, i, anchor)
                pending = None
            elif python and age < 3 and _KWARG_LINE_RE.match(code):
                # argparse style: the flag, then `type=int,` lines, then `default=…`
                pending = (pname, praw, pline, pchanged, age + 1)
            else:
                pending = None
        for match in _FLAG_RE.finditer(code) if "--" in code else ():
            raw = match.group(1)
            name = normalize(raw)
            if not wanted(name):
                continue
            value = _flag_value(code, match.start(), match.end())
            if value is None and python:
                # `add_argument("--timeout", type=int, default=600)` on one line
                default = _DEFAULT_KW_RE.search(code, match.end())
                value = _scan_value(code, default.end(), words=False) if default else None
            if value == _PENDING:
                pending = (name, raw, no, changed, 0)
            elif isinstance(value, tuple):
                add(name, raw, value, i)
        if yaml_keys and ":" in code:
            key = _YAML_KEY_RE.match(code)
            if key is not None:
                raw = key.group(2)
                name = normalize(raw)
                label = _label(side, i) if name == "value" else ""
                if label:
                    name, raw = "metric-value", f"{label} value"
                if wanted(name):
                    rest = code[key.end() :].strip().rstrip(",").strip()
                    if rest and rest[0] in "\"'":
                        scanned = _scan_value(rest, 0, words=True)
                        if scanned is not None:
                            add(name, raw, scanned, i, label=label)
                    elif rest and rest[0] not in "|>[{&*!":
                        add(name, raw, (rest[:200], "$" not in rest and "{{" not in rest), i,
                            label=label)
            for match in _FLOW_KEY_RE.finditer(code) if "{" in code or "}" in code else ():
                name = normalize(match.group(1))
                if wanted(name):
                    scanned = _scan_value(code, match.end(), words=True)
                    if scanned is not None:
                        add(name, match.group(1), scanned, i)
        quoted = ":" in code and ('"' in code or "'" in code)
        for match in _QUOTED_KEY_RE.finditer(code) if quoted else ():
            name = normalize(match.group(2))
            if wanted(name):
                scanned = _scan_value(code, match.end(), words=False)
                if scanned is not None:
                    add(name, match.group(2), scanned, i)
        if "=" not in code:
            continue
        annotated = _PY_ANNOTATED_RE.match(code) if python else None
        matches: Iterable[re.Match[str]] = (annotated,) if annotated else _ASSIGN_RE.finditer(code)
        for match in matches:
            raw = match.group(1).rsplit(".", 1)[-1]
            name = normalize(raw)
            if wanted(name):
                scanned = _scan_value(code, match.end(), words=not python)
                if scanned is not None:
                    add(name, raw, scanned, i)
    return out


def is_yaml_like(path: str) -> bool:
    lower = path.lower()
    name = lower.rsplit("/", 1)[-1]
    return not (lower.endswith((".py", ".sh", ".bash", ".pyi")) or name.startswith("dockerfile"))


# The rules sharing this module run over the same snapshot one after another: per-hunk
# and per-file derivations are computed once and kept with the hunk or file itself
# (`derived`), so they are freed with the snapshot instead of outliving the review.
_T = TypeVar("_T")
_KIND = itemgetter(0)  # of a DiffLine


def _memoized(kind: str, obj: Hunk | ChangedFile, compute: Callable[[], _T]) -> _T:
    key = "knobs." + kind
    store = obj.derived
    if key in store:
        return cast(_T, store[key])
    value = store[key] = compute()
    return value


class Side(list[SideLine]):
    """One side of a hunk, as `sides` returns it, keeping its text for every search."""

    text: tuple[list[str], str] | None = None


def side_text(side: Sequence[SideLine]) -> tuple[list[str], str]:
    """A side's lines cut to `MAX_LINE`, and joined with newlines for one-pass searches."""
    if isinstance(side, Side) and side.text is not None:
        return side.text
    texts = [text[:MAX_LINE] for _, text, _ in side]
    found = texts, "\n".join(texts)
    if isinstance(side, Side):
        side.text = found
    return found


def side_contains(side: Sequence[SideLine], word: str) -> bool:
    """Whether a line of the side contains `word` (which holds no newline)."""
    texts, joined = side_text(side)
    if word in joined:
        return True
    if max(map(len, texts), default=0) < MAX_LINE:
        return False  # no line was cut short for `side_text`
    return any(word in text for _, text, _ in side)


def sides(hunk: Hunk) -> tuple[Side, Side]:
    """The base side and the head side of a hunk, each with its context lines."""
    return _memoized("sides", hunk, lambda: _sides(hunk))


def _sides(hunk: Hunk) -> tuple[Side, Side]:
    removed, added = LineKind.REMOVED, LineKind.ADDED
    lines = hunk.lines
    old = Side([(o, text, kind is removed) for kind, text, o, _ in lines if o is not None])
    new = Side([(n, text, kind is added) for kind, text, _, n in lines if n is not None])
    return old, new


def pair(old: Sequence[Setting], new: Sequence[Setting]) -> list[Change]:
    """Pair changed settings by name: same label, same indentation, then order, position.

    The cheapest pairs are taken first, so a job-level `timeout-minutes` added above a
    changed step-level one does not steal the step's old value.
    """
    olds = [s for s in old if s.changed]
    news = [s for s in new if s.changed]
    old_by_name: dict[str, list[int]] = {}
    new_by_name: dict[str, list[int]] = {}
    for k, setting in enumerate(olds):
        old_by_name.setdefault(setting.name, []).append(k)
    for k, setting in enumerate(news):
        new_by_name.setdefault(setting.name, []).append(k)
    match: dict[int, int] = {}  # new index → old index
    for name, new_ids in new_by_name.items():
        old_ids = old_by_name.get(name, [])
        if len(old_ids) * len(new_ids) > _MAX_PAIRING * _MAX_PAIRING or (
            len(old_ids) == len(new_ids) and all(
                olds[o].label == news[n].label and olds[o].indent == news[n].indent
                for n, o in zip(new_ids, old_ids, strict=True))
        ):
            match.update(zip(new_ids, old_ids, strict=False))  # the cheapest pairs anyway
            continue
        costs = sorted(
            ((olds[o].label != news[n].label, olds[o].indent != news[n].indent,
              abs(rank - ordinal), abs(olds[o].pos - news[n].pos)), n, o)
            for ordinal, n in enumerate(new_ids)
            for rank, o in enumerate(old_ids)
        )
        taken: set[int] = set()
        for _, n, o in costs:
            if n not in match and o not in taken:
                match[n] = o
                taken.add(o)
    paired = set(match.values())
    changes = [Change(olds[match[n]] if n in match else None, s) for n, s in enumerate(news)]
    changes += [Change(olds[k], None) for k in range(len(olds)) if k not in paired]
    return changes


# The knob rules run one after another over the same snapshot with the same (union)
# filter: each hunk is parsed once, and the result is kept with the hunk.
_REMOVAL_MATTERS = frozenset({"parallelism", "max-parallel"})


def hunk_changes(changed: ChangedFile, hunk: Hunk, wanted: KnobFilter) -> list[Change]:
    """Every changed, added or removed wanted setting of one hunk, paired old → new."""
    entry = hunk.derived.get("knobs.changes")
    if entry is not None:
        cached_filter, cached = cast(tuple[KnobFilter, list[Change]], entry)
        if cached_filter is wanted:
            return cached
    old, new = sides(hunk)
    yaml_keys = is_yaml_like(changed.path)
    python = changed.path.endswith((".py", ".pyi"))
    head = extract(new, wanted, yaml_keys=yaml_keys, python=python)
    # Removed settings matter when the head side sets the same knob (old → new), or
    # when a whole shard count goes away (shard-matrix reports `parallelism` removed).
    names = {s.name for s in head if s.changed} | _REMOVAL_MATTERS
    base = extract(old, wanted, yaml_keys=yaml_keys, python=python, only=names)
    result = pair(base, head)
    hunk.derived["knobs.changes"] = (wanted, result)
    return result


def shared_filter(config: Config) -> KnobFilter:
    """The union of every knob-reading rule's names, so they share one parse per hunk."""
    names = list(config.knobs)
    for option, default in (("gates", GATES), ("tolerances", TOLERANCES),
                            ("timeouts", TIMEOUTS), ("sample_counts", SAMPLE_COUNTS)):
        names += config.option("threshold-loosening", option, default)
    names += config.option("shard-matrix", "size_keys", SHARD_SIZE_KEYS)
    names += ("max-parallel", "parallelism")
    return knob_filter(tuple(names))


def new_unit_lines(hunk: Hunk) -> frozenset[int]:
    """Head lines in runs of added lines that start a new test, step or job."""
    return _memoized("units", hunk, lambda: _new_unit_lines(hunk))


def _new_unit_lines(hunk: Hunk) -> frozenset[int]:
    added = hunk.added
    if not added:
        return frozenset()
    numbers = [line.new_no for line in added]
    if None in numbers:
        return _new_unit_lines_slowly(hunk)
    texts = [line.text[:400] for line in added]
    joined = "\n".join(texts)
    if joined.count("\n") + 1 != len(texts):
        return _new_unit_lines_slowly(hunk)  # no added line, or one holding a newline
    if _NEW_UNIT_LINES_RE.search(joined) is None:
        return frozenset()  # most hunks: one search over every added line
    starts = list(accumulate([len(t) + 1 for t in texts], initial=0))
    result: set[int] = set()
    first = 0
    # A run is the added lines between two context lines (removed lines don't end it);
    # the kinds are one-character strings, so runs are the pieces between spaces.
    for piece in "".join(map(_KIND, hunk.lines)).split(" "):
        size = piece.count("+")
        if size and _NEW_UNIT_LINES_RE.search(joined, starts[first],
                                              starts[first + size] - 1) is not None:
            result.update(cast("list[int]", numbers[first : first + size]))
        first += size
    return frozenset(result)


def _new_unit_lines_slowly(hunk: Hunk) -> frozenset[int]:
    result: set[int] = set()
    run: list[int] = []
    is_new = False
    for line in (*hunk.lines, None):
        if line is not None and line.kind is LineKind.ADDED and line.new_no is not None:
            run.append(line.new_no)
            is_new = is_new or _NEW_UNIT_RE.match(line.text[:400]) is not None
            continue
        if line is not None and line.kind is LineKind.REMOVED:
            continue
        if is_new:
            result.update(run)
        run, is_new = [], False
    return frozenset(result)


def head_text_map(changed: ChangedFile) -> dict[int, str]:
    """Head lines known from the full text, else from the patch (added + context)."""
    return _memoized("head", changed, lambda: _head_text_map(changed))


def _head_text_map(changed: ChangedFile) -> dict[int, str]:
    if changed.head_lines is not None:
        return dict(enumerate(changed.head_lines, 1))
    return {
        line.new_no: line.text
        for hunk in changed.hunks
        for line in hunk.lines
        if line.new_no is not None
    }


def value_lines(changed: ChangedFile) -> frozenset[int]:
    """Head lines where a `#` is part of a YAML value rather than a comment a reader sees.

    That is folded scalars (`server_args: >-`: the lines are joined and passed on) and
    literal scalars other than shell scripts (`run: |`, `command: |`, Buildkite `- |`,
    whose shell does treat `#` as a comment). Scanned as block-scalar-comment does.
    """
    if not is_yaml(changed.path):
        return frozenset()
    return _memoized("values", changed, lambda: frozenset(
        line.number for line in view(changed) if line.block is not None
        and (line.block.folded or line.block.key not in _SHELL_KEYS)
    ))


class Description:
    """The PR text, with `description_explains` answers memoized and cheaply pre-checked.

    A sentence can only explain a knob it names, so a subject absent from the whole
    text (one substring search) skips the sentence scan; large PR bodies stay cheap.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._normalized = text[:200_000].lower().replace("_", "-")
        self._memo: dict[tuple[str, ...], str | None] = {}

    def explains(self, subjects: Sequence[str]) -> str | None:
        key = tuple(subjects)
        if key not in self._memo:
            named = any(s and s.lower().replace("_", "-") in self._normalized for s in key)
            self._memo[key] = description_explains(self.text, key) if named else None
        return self._memo[key]


def is_prose(comment: str) -> bool:
    """A comment that could explain something: not a pragma, not commented-out code."""
    text = comment.strip()[:400]
    if _PRAGMA_RE.match(text) or _CODE_COMMENT_RE.match(text):
        return False
    if _REFERENCE_RE.search(text):
        return True  # "see #1234" points at the explanation
    # Two words at least (`# optional` explains nothing); CJK text has no spaces.
    return len(_WORD_RE.findall(text)) >= 2 or len(_CJK_RE.findall(text)) >= 4


def adjacent_comment(
    changed: ChangedFile, numbers: Iterable[int], radius: int = 2
) -> tuple[int, str] | None:
    """A prose `#` comment within `radius` head lines of any of `numbers`.

    The same definition as `explain.comment_near`, except that a `#` in a YAML value
    (see `value_lines`) reaches the program and is not a comment anyone reads as one.
    """
    head = head_text_map(changed)
    for number_ in numbers:
        for n in range(max(1, number_ - radius), number_ + radius + 1):
            text = head.get(n)
            comment = comment_text(text[:MAX_LINE]) if text is not None and "#" in text else None
            if comment and len(comment) >= 3 and is_prose(comment) and n not in value_lines(
                    changed):
                return n, comment
    return None


# What loosening means per kind of knob (threshold-loosening's option defaults).
GATES: tuple[str, ...] = (
    "*threshold", "*min-throughput*", "min-accuracy*", "min-score*", "expected-accuracy*",
    "expected-score*", "*expected-score", "metric-value", "baseline-score*",
)
TOLERANCES: tuple[str, ...] = (
    "rtol", "atol", "*-rtol", "*-atol", "rel-tol", "abs-tol", "*tolerance*",
)
TIMEOUTS: tuple[str, ...] = ("*timeout*", "max-wait*", "*-max-wait*", "*wait-time*")
SAMPLE_COUNTS: tuple[str, ...] = (
    "num-questions", "num-prompts", "num-samples", "n-samples", "num-examples", "max-samples",
    "limit", "*-num-samples", "num-eval-samples",
)
# A gate whose name says it bounds something from above (latency, error) loosens upwards.
UPPER_WORDS: tuple[str, ...] = (
    "max", "latency", "ttft", "tpot", "itl", "e2el", "error", "loss", "time", "duration",
    "diff", "delta", "drop", "regression", "slowdown", "memory",
)
_DURATION_RE = re.compile(
    r"(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|mins?|minutes?|h|hrs?|hours?)", re.I
)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


SHARD_SIZE_KEYS: tuple[str, ...] = (
    "part-size", "num-parts", "total-parts", "num-shards", "total-shards", "shard-count",
    "num-partitions", "total-partitions", "auto-partition-size", "splits",
)


@dataclass(frozen=True)
class Categories:
    """Which knobs are gates, tolerances, timeouts or sample counts, and their direction."""

    gates: tuple[str, ...] = GATES
    tolerances: tuple[str, ...] = TOLERANCES
    timeouts: tuple[str, ...] = TIMEOUTS
    sample_counts: tuple[str, ...] = SAMPLE_COUNTS
    upper_words: tuple[str, ...] = UPPER_WORDS
    _kinds: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    def kind(self, name: str) -> str | None:
        """tolerance | timeout | samples | gate (looser when lower) | ceiling (when higher)."""
        if name not in self._kinds:
            self._kinds[name] = self._kind(name)
        return self._kinds[name]

    def _kind(self, name: str) -> str | None:
        if knob_filter(self.tolerances)(name):
            return "tolerance"
        if knob_filter(self.timeouts)(name):
            return "timeout"
        if knob_filter(self.sample_counts)(name):
            return "samples"
        if knob_filter(self.gates)(name):
            words = set(name.split("-"))
            return "ceiling" if any(w in words for w in self.upper_words) else "gate"
        return None

    def wanted(self) -> KnobFilter:
        return knob_filter(self.gates + self.tolerances + self.timeouts + self.sample_counts)


def _magnitude(value: str, kind: str) -> float | None:
    """A comparable number; timeouts also accept `30m`/`1h`/`90s` (converted to seconds)."""
    plain = number(value)
    if plain is not None or kind != "timeout":
        return plain
    match = _DURATION_RE.fullmatch(value.strip().strip("\"'"))
    if match is None:
        return None
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)[0].lower()]


def loosening(change: Change, categories: Categories, allow_added: bool = False) -> str | None:
    """The kind of knob when `change` makes its check looser, else None.

    A value that is not a plain number on either side (an expression, a variable, a
    template) is not compared. Timeouts of 0 or less usually mean "no limit" in one tool
    and "fail at once" in another, so they are not compared either.
    """
    new = change.new
    if new is None:
        return None
    kind = categories.kind(new.name)
    if kind is None:
        return None
    if change.old is None:
        return kind if kind == "tolerance" and allow_added and number(new.value) is not None \
            else None
    before, after = _magnitude(change.old.value, kind), _magnitude(new.value, kind)
    if before is None or after is None:
        return None
    if (number(change.old.value) is None) != (number(new.value) is None):
        return None  # `30m` vs `600`: units unknown on one side
    if kind == "timeout" and (before <= 0 or after <= 0):
        return None
    looser = after < before if kind in ("gate", "samples") else after > before
    return kind if looser else None
