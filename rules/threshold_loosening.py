"""threshold-loosening: a gate, tolerance, timeout or sample count made easier to pass."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import (
    CATEGORY_OPTIONS,
    Description,
    adjacent_comment,
    configured_categories,
    holds_yaml_keys,
    hunk_changes,
    loosening,
    new_unit_lines,
    number,
    shared_filter,
)
from rules.analysis.lines import MAX_LINE, SideLine, side_text, sides
from rules.base import Rule, RuleContext

_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
# `assert score >= 0.8` / `assert 0.8 <= score`; the subject may not contain <, >, = or ,
_ASSERT_RE = re.compile(rf"^\s*assert\s+([^<>=!#,]+)([<>]=?)\s*({_NUM})\s*(?:,|#|$)")
_ASSERT_REV_RE = re.compile(rf"^\s*assert\s+({_NUM})\s*([<>]=?)\s*([^<>=!#,]+?)\s*(?:,|#|$)")
_METHOD_RE = re.compile(r"\bassert(Greater|Less)(?:Equal)?\(")
# A line of a joined side that the two `assert` patterns above could match: `\s*` may
# run across blank lines, but only to an `assert` that starts its own line anyway.
_ASSERT_START_RE = re.compile(r"^\s*assert\s", re.M)
_CALL_HEAD_RE = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_SPACE_RE = re.compile(r"\s+")
_RETRY_RE = re.compile(r"\b(?:retry|automatic|manual|exit_status)\b")

_WHAT = {
    "gate": ("Gate", "lowered", "results that failed before now pass, so a real regression "
             "can merge unnoticed"),
    "ceiling": ("Ceiling", "raised", "results that failed before now pass, so a real "
                "regression can merge unnoticed"),
    "tolerance": ("Tolerance", "raised", "numerical drift of that size now passes the check"),
    "timeout": ("Timeout", "raised", "a hang or slowdown now takes longer to fail and holds "
                "the runner meanwhile; make sure the slowdown itself is understood"),
    "samples": ("Sample count", "cut", "the score comes from fewer samples, so it is noisier "
                "and the gate catches less (and flakes more)"),
}


@dataclass(frozen=True)
class _Loose:
    kind: str
    raw: str
    old: str  # "" when the knob is new
    new: str
    line: int  # an added line
    lines: tuple[int, ...]
    name: str


@dataclass(frozen=True)
class _Gate:
    """A numeric bound in an assertion: `subject` must stay above (lower) or below it."""

    subject: str
    lower: bool
    bound: float
    text: str
    line: int
    changed: bool


def _split_args(text: str) -> list[str] | None:
    """Top-level arguments of a call whose `(` was just consumed; None if it never closes."""
    args: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                args.append(text[start:i].strip())
                return args
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    return None


def _gates(side: Sequence[SideLine]) -> list[_Gate]:
    gates: list[_Gate] = []
    for i, (no, text, changed) in enumerate(side):
        code = text[:MAX_LINE]
        if "assert" not in code:
            continue
        match = _ASSERT_RE.match(code)
        if match:
            subject, op, value = match.group(1), match.group(2), match.group(3)
            gates.append(_Gate(_SPACE_RE.sub("", subject), op[0] == ">", float(value),
                               value, no, changed))
            continue
        match = _ASSERT_REV_RE.match(code)
        if match:
            value, op, subject = match.group(1), match.group(2), match.group(3)
            gates.append(_Gate(_SPACE_RE.sub("", subject), op[0] == "<", float(value),
                               value, no, changed))
            continue
        method = _METHOD_RE.search(code)
        if method is None:
            continue
        # The arguments may continue on the next two lines of the same side.
        parts = [(no, code[method.end():], changed)]
        parts += [(n, t[:MAX_LINE], c) for n, t, c in side[i + 1 : i + 3]]
        joined = " ".join(p[1] for p in parts)
        args = _split_args(joined)
        if not args or len(args) < 2:
            continue
        greater = method.group(1) == "Greater"
        first, second = number(args[0]), number(args[1])
        if second is not None and first is None:
            subject, bound, text_value, lower = args[0], second, args[1], greater
        elif first is not None and second is None:
            subject, bound, text_value, lower = args[1], first, args[0], not greater
        else:
            continue
        where = next((p for p in parts if text_value in p[1] and p[2]), None)
        where = where or next((p for p in parts if p[2]), parts[0])
        gates.append(_Gate(_SPACE_RE.sub("", subject), lower, bound, text_value, where[0],
                           where[2]))
    return gates


def _may_gate(side: Sequence[SideLine]) -> bool:
    """Whether any line of the side can hold an assertion `_gates` reads (most can't)."""
    _, joined = side_text(side)
    return ("assertGreater" in joined or "assertLess" in joined
            or _ASSERT_START_RE.search(joined) is not None)


def _gate_loosenings(hunk: Hunk) -> Iterator[tuple[_Gate, _Gate]]:
    old_side, new_side = sides(hunk)
    if not _may_gate(new_side) or not _may_gate(old_side):
        return
    news = [g for g in _gates(new_side) if g.changed]
    if not news:
        return
    olds = [g for g in _gates(old_side) if g.changed]
    used: set[int] = set()
    for gate in news:
        k = next((k for k, o in enumerate(olds) if k not in used
                  and o.subject == gate.subject and o.lower == gate.lower), None)
        if k is None:
            continue
        used.add(k)
        old = olds[k]
        if (gate.bound < old.bound) if gate.lower else (gate.bound > old.bound):
            yield old, gate


def _tolerance_on_existing_check(changed: ChangedFile, removed: list[str], line_text: str) -> bool:
    """A tolerance added to a check that was already there (not to a brand-new one)."""
    if holds_yaml_keys(changed.path):
        return True
    head = _CALL_HEAD_RE.search(line_text)
    if head is None:
        return bool(removed)  # a continuation line inside a call that was edited
    return any(head.group(1) in text for text in removed)


class ThresholdLoosening(Rule):
    """An accuracy gate, tolerance, timeout or sample count loosened.

    Why it destabilizes CI
    ----------------------
    Loosening is the cheapest way to turn a red job green, and it is sometimes right
    (a 20-minute server-start timeout that only hid an OOM, as in vLLM #51015, was not
    the thing to raise). Each loosening hides something: a lower `accuracy_threshold`
    lets a real accuracy regression merge, a larger `rtol`/`atol` hides numerical drift,
    a longer `timeout-minutes` lets hangs hold runners longer, and fewer
    `num_questions` make the score noisier so the gate flakes more and catches less.
    So every loosening is flagged, however well argued; the finding quotes the reason
    when the description or a comment next to the change gives one. Fewer few-shot
    examples (`num_fewshot`) are not treated as loosening: they make the task harder,
    not the gate easier.

    Flags
    -----
    A gate or floor lowered (`*threshold`, `min_throughput`, expected scores, lm-eval
    `metrics: value`, `assert acc > 0.8` / `assertGreater(acc, 0.8)`), a ceiling raised,
    a tolerance raised or added to an existing check, a timeout or max-wait raised, a
    sample count cut:
    ```yaml
    accuracy_threshold: 0.85   # was 0.90
    num_questions: 200         # was 1319
    ```

    Tightening (a higher gate, a lower tolerance, a new or shorter timeout) is never
    flagged, nor are values that can't be compared (expressions, variables).

    Prefer
    ------
    Fix the cause and keep the gate; when loosening is the right call, say why next to
    the value and link the failing run:
    ```yaml
    # GSM8K on 1319 questions is 0.88±0.01 on B200 since #49294 (run 81913);
    # restore 0.90 once the FlashInfer workspace fix lands.
    accuracy_threshold: 0.87
    ```
    """

    id = "threshold-loosening"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, Any]] = CATEGORY_OPTIONS

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        categories = configured_categories(ctx.config)
        wanted = categories.wanted()
        union = shared_filter(ctx.config)
        description = Description(ctx.snapshot.text)
        for changed in ctx.files():
            if changed.status in ("added", "copied"):
                continue
            found: list[_Loose] = []
            for hunk in changed.hunks:
                fresh = new_unit_lines(hunk)
                removed: list[str] | None = None
                for change in hunk_changes(changed, hunk, union):
                    new = change.new
                    if new is None or not wanted(new.name):
                        continue
                    if removed is None:
                        removed = [line.text for line in hunk.removed]
                    text = _line_text(hunk, new.line)
                    if new.name == "limit" and _retry_limit(hunk, new.line):
                        continue  # Buildkite `retry: automatic: limit:` is not a sample count
                    allow = new.line not in fresh and _tolerance_on_existing_check(
                        changed, removed, text)
                    kind = loosening(change, categories, allow)
                    if kind is None:
                        continue
                    old = change.old.shown if change.old is not None else ""
                    found.append(_Loose(kind, new.raw, old, new.shown, new.line, new.lines,
                                        new.name))
                for old_gate, gate in _gate_loosenings(hunk):
                    found.append(_Loose("gate" if gate.lower else "ceiling",
                                        f"assert on {gate.subject}", old_gate.text, gate.text,
                                        gate.line, (gate.line,), gate.subject))
            if found:
                yield from self._report(description, changed, found)

    def _report(
        self, description: Description, changed: ChangedFile, found: list[_Loose]
    ) -> Iterator[Finding]:
        for item in found:
            kind, raw, old, new = item.kind, item.raw, item.old, item.new
            noun, verb, why = _WHAT[kind]
            if old:
                what = f"{noun} `{raw}` {verb} {old} → {new}"
            else:
                what = f"{noun} `{raw}={new}` added to an existing check"
                why = "it no longer requires a (near-)exact match"
            comment = adjacent_comment(changed, item.lines)
            said = description.explains([item.name, raw, new])
            if comment is not None:
                reason = f" Reason given next to it: “{_cut(comment[1])}”."
            elif said is not None:
                reason = f" Reason given in the description: “{_cut(said)}”."
            else:
                reason = " No reason is given next to it or in the PR description."
            yield self.finding(
                f"{what}: {why}.{reason}",
                file=changed,
                line=item.line,
                key=f"{kind}|{raw}|{old}|{new}",
                details=((raw, f"{old or '(none)'} → {new}"),),
            )


def _retry_limit(hunk: Hunk, number_: int) -> bool:
    above = [line.text for line in hunk.lines
             if line.new_no is not None and number_ - 4 <= line.new_no < number_]
    return any(_RETRY_RE.search(text) for text in above)


def _line_text(hunk: Hunk, number_: int) -> str:
    return next((line.text for line in hunk.lines if line.new_no == number_), "")


def _cut(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
