"""Knob settings in a diff: which tuning values a hunk sets, and what they were before.

Shared by knob-rationale, threshold-loosening and shard-matrix. A knob is recognised
written as a YAML/JSON key (`max_concurrency: 100`), a flag inside a string or a
folded block scalar (`--max-num-batched-tokens 32768`, `--timeout=600`), Python/YAML
list items (`"--mem-fraction-static", "0.3"` on one line or on consecutive lines), a
keyword argument or assignment (`rtol=1e-3`, `TIMEOUT = 600`, `export TIMEOUT=600`),
or a key of a flow mapping (`{ shard: 1, num_shards: 5 }`). `changes` pairs the
settings of both sides so rules can say old → new.

Everything here is line-based and linear: no regex has nested quantifiers over user
text, and very long lines are cut before scanning.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Container, Sequence
from itertools import accumulate
from typing import NamedTuple

from rules.analysis.knobs.assignments import assignments
from rules.analysis.knobs.entry_keys import entry_of
from rules.analysis.knobs.names import KnobFilter, named_words, normalize
from rules.analysis.knobs.values import PENDING, flag_value, number, scan_value
from rules.analysis.lines import MAX_LINE, SideLine, code_part, side_text

_FLAG_RE = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*)")
_YAML_KEY_RE = re.compile(r"^\s*(?:-\s+)?([\"']?)([A-Za-z_][\w.-]*)\1\s*:(?=\s|$)")
_QUOTED_KEY_RE = re.compile(r"([\"'])([A-Za-z_][\w.-]*)\1\s*:\s*")
_FLOW_KEY_RE = re.compile(r"[{,]\s*([A-Za-z_][\w-]*)\s*:\s")
_DEFAULT_KW_RE = re.compile(r"\bdefault\s*=\s*")
_VALUE_ONLY_RE = re.compile(r"^\s*(?:-\s+)?([\"']?)([^\s\"',#\[\]{}()=:]+)\1(?:\s*,)?(?:\s*\\)?$")
_KWARG_LINE_RE = re.compile(r"^\s*\w+\s*=[^=]")
_NAME_LINE_RE = re.compile(r"^\s*(?:-\s+)?name\s*:\s*[\"']?([^\"'#]*)")
# `{"name": "gsm8k", "threshold": 0.86}`: the entry a value on the same line belongs to.
_SAME_LINE_NAME_RE = re.compile(
    r"(?:^|[{,(\s])[\"']?(?:name|task|metric|dataset)[\"']?\s*[:=]\s*[\"']([^\"']{1,80})[\"']")
_LABEL_WORDS = ("name", "task", "metric", "dataset")
# The children of a gate key holding a mapping (`recovery_threshold:` then `metric: 0.9`).
_CHILD_RE = re.compile(r"^(\s*)([\"']?)([^\s:#\"'][^:#\"']{0,120}?)\2\s*:\s+(\S[^#]*?)\s*(?:#.*)?$")


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
    target: str = ""  # an assignment's target as written (`cfg.tp`, `cfg['x']['tp']`)
    entry: tuple[str, str] = ("", "")  # the data-config entry holding it (`entry_keys`)

    @property
    def shown(self) -> str:
        return self.value if self.literal or len(self.value) <= 40 else self.value[:37] + "..."


def _label(side: Sequence[SideLine], i: int) -> str:
    """The metric name of a `value:` key (vLLM lm-eval `metrics: - name: … value: …`)."""
    for j in range(i - 1, max(-1, i - 4), -1):
        match = _NAME_LINE_RE.match(side[j][1][:400])
        if match:
            return match.group(1).strip()
    return ""


def _candidates(
    side: Sequence[SideLine], texts: list[str], joined: str, words: list[str]
) -> list[int]:
    """Indices of the lines that contain one of `words` and are changed or just above
    a change (a flag on a context line whose value line below it changed), in order.

    A substring search per word (at C speed, one hit per line) instead of a regex
    alternation over the side: the words hold no newline, so the lines holding an
    occurrence are exactly the lines an alternation's matches fall on.
    """
    hits: list[int] = []
    for word in words:
        at = joined.find(word)
        while at >= 0:
            hits.append(at)
            end = joined.find("\n", at + len(word))
            at = joined.find(word, end + 1) if end >= 0 else -1
    hits.sort()
    # A hit's line is the count of newlines before it when no line holds one (the
    # usual case, checked in one pass): no table of line starts to build for the few
    # hits a side has.
    starts = (None if joined.count("\n") == len(texts) - 1
              else list(accumulate([len(t) + 1 for t in texts], initial=0)))
    size = len(side)
    found: list[int] = []
    i = at = 0
    for start in hits:
        if starts is None:
            i += joined.count("\n", at, start)
            at = start
        else:
            i = bisect_right(starts, start) - 1
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
    block: tuple[str, str, int] | None = None  # a gate key whose mapping is being read

    def add(name: str, raw: str, value: tuple[str, bool], i: int, extra: Setting | None = None,
            label: str = "", target: str = "") -> None:
        no, text, changed = side[i]
        if not label and any(w in text for w in _LABEL_WORDS):
            same = _SAME_LINE_NAME_RE.search(text[:MAX_LINE])
            label = same.group(1) if same else label
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
        # Only a changed setting is paired, and only a data config's entries are read.
        entry = entry_of(side, i) if changed and yaml_keys else ("", "")
        out.append(Setting(name, raw, value[0], value[1], report, lines, changed, label, i,
                           indent, target, entry))

    texts, joined = side_text(side)
    named = named_words(joined, only) if only is not None else None
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
        if pending is None and block is None:
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
        code = code_part(text[:MAX_LINE])
        if block is not None:
            child = _CHILD_RE.match(code.rstrip())
            if child is not None and len(child.group(1)) > block[2] and number(child.group(4)):
                add(block[0], f"{block[1]} {child.group(3)}", (child.group(4), True), i,
                    label=child.group(3))
                continue
            if len(text) - len(stripped) <= block[2]:
                block = None
            else:
                continue
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
                scanned = scan_value(code, default.end(), words=False)
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
            value = flag_value(code, match.start(), match.end())
            if value is None and python:
                # `add_argument("--timeout", type=int, default=600)` on one line
                default = _DEFAULT_KW_RE.search(code, match.end())
                value = scan_value(code, default.end(), words=False) if default else None
            if value == PENDING:
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
                        scanned = scan_value(rest, 0, words=True)
                        if scanned is not None:
                            add(name, raw, scanned, i, label=label)
                    elif rest and rest[0] not in "|>[{&*!":
                        add(name, raw, (rest[:200], "$" not in rest and "{{" not in rest), i,
                            label=label)
                    elif not rest:
                        # a mapping of per-metric values follows (`recovery_threshold:`)
                        block = (name, raw, len(text) - len(stripped))
            for match in _FLOW_KEY_RE.finditer(code) if "{" in code or "}" in code else ():
                name = normalize(match.group(1))
                if wanted(name):
                    scanned = scan_value(code, match.end(), words=True)
                    if scanned is not None:
                        add(name, match.group(1), scanned, i)
        quoted = ":" in code and ('"' in code or "'" in code)
        for match in _QUOTED_KEY_RE.finditer(code) if quoted else ():
            name = normalize(match.group(2))
            if wanted(name):
                scanned = scan_value(code, match.end(), words=False)
                if scanned is not None:
                    add(name, match.group(2), scanned, i)
        if "=" not in code:
            continue
        for found in assignments(code, wanted, python):
            if found.value is None:
                pending = (found.name, found.raw, no, changed, 0)  # `x = Field(` then `0.7,`
            else:
                add(found.name, found.raw, found.value, i, target=found.target)
    return out


def holds_yaml_keys(path: str) -> bool:
    """Whether `key: value` lines may set knobs here: YAML, JSON, TOML, INI and the like,
    not Python, shell or a Dockerfile (not an is-YAML check: see `yamlscan.is_yaml`)."""
    lower = path.lower()
    name = lower.rsplit("/", 1)[-1]
    return not (lower.endswith((".py", ".sh", ".bash", ".pyi")) or name.startswith("dockerfile"))
