"""threshold-loosening's findings: one loosening as found, and how it is said."""

from __future__ import annotations

from dataclasses import dataclass

_PASSES = "results that failed before now pass, so a real regression can merge unnoticed"
_GONE = "so a regression {} merges unnoticed"
_WHAT = {
    "gate": ("Gate", "lowered", _PASSES),
    "ceiling": ("Ceiling", "raised", _PASSES),
    "tolerance": ("Tolerance", "raised", "numerical drift of that size now passes the check"),
    "margin": ("Allowed margin", "widened", "results that much further from the baseline "
               "now pass, so a real regression of that size can merge unnoticed"),
    "timeout": ("Timeout", "raised", "a hang or slowdown now takes longer to fail and holds "
                "the runner meanwhile; make sure the slowdown itself is understood"),
    "entries": ("Eval entries", "removed",
                "their gates no longer run at all, " + _GONE.format("on them")),
    "samples": ("Sample count", "cut", "the score comes from fewer samples, so it is noisier "
                "and the gate catches less (and flakes more)"),
    "malformed": ("Value", "changed", "the new value is not a number, so the check reads it "
                  "as text, ignores it or fails to load, and results that failed before "
                  "may pass"),
    "dropped": ("Gate", "removed", "the check it made is gone, " + _GONE.format("it caught now")),
    "widened": ("Condition", "widened", "the looser value now also applies to what the "
                "condition newly admits, where the stricter one held before"),
    "slack": ("Slack", "added", "values up to that much past the old bound now pass, so a "
              "regression of that size merges unnoticed"),
    "assertion": ("Assertion", "removed", "the test still runs but no longer checks this, "
                  + _GONE.format("it caught now")),
    "recorded": ("Sample count", "cut",
                 "the score comes from fewer samples, so it is noisier and the gate catches "
                 "less (and flakes more)"),
    "one-sided": ("One-sided check", "replaces", "drift in the other direction now passes"),
    "rounding": ("Tolerance added by rounding", "in",
                 "values that differed before now compare equal after rounding"),
}
NOUNS = {"gate": "Gate", "ceiling": "Ceiling", "samples": "Sample count",
          "tolerance": "Tolerance"}


@dataclass(frozen=True)
class Loose:
    kind: str
    raw: str
    old: str  # "" when the knob is new
    new: str
    line: int  # an added line
    lines: tuple[int, ...]
    name: str
    note: str = ""  # what the message adds (the code default that applies)
    medium: bool = False  # a reading the diff alone cannot settle
    noun: str = ""  # what a dropped setting was (a gate, a sample count)
    subjects: tuple[str, ...] = ()  # the removed eval entries, as the description names them


def describe_loosening(item: Loose) -> tuple[str, str]:
    """(what changed, why it matters) for the message."""
    kind, raw, old, new = item.kind, item.raw, item.old, item.new
    noun, verb, why = _WHAT[kind]
    if kind == "entries":
        what = f"{noun} {verb} from `{cut(raw, 80)}`: {old}"
    elif kind == "dropped":
        what = f"{item.noun or noun} `{cut(raw, 80)}` {verb} (it was {old}){item.note}"
    elif kind in ("one-sided", "rounding"):
        what = f"{noun} `{cut(new, 80)}` {verb} `{cut(old, 80)}`"
    elif kind == "recorded":
        what = (f"{noun} `{raw}` {verb} {old} → {new} (the old value as the comment "
                f"above records it: “{cut(item.note, 80)}”)")
    elif kind == "slack":
        what = f"{noun} `{item.note}` {verb} to the bound of `{cut(old, 80)}`: now `{cut(new, 80)}`"
    elif kind == "assertion":
        what = f"{noun} `{cut(raw, 80)}` {verb} from `{item.name}`"
    elif kind == "widened":
        what = (f"{noun} `{cut(old, 60)}` {verb} to `{cut(new, 80)}`: it selects "
                f"{raw}{item.note}")
    elif kind == "malformed":
        what = f"{noun} `{raw}` {old} → {new}"
    elif kind == "margin":
        what = f"{noun} `{raw}` {verb} {old} → {new}{item.note}"
    elif item.note:
        what = f"{NOUNS.get(kind, noun)} `{raw}` set to {new}{item.note}"
    elif old:
        what = f"{noun} `{raw}` {verb} {old} → {new}"
    else:
        what = f"{noun} `{raw}={new}` added to an existing check"
        why = "it no longer requires a (near-)exact match"
    return what, why


def repeat_key(item: Loose, code: bool) -> tuple[str, ...]:
    """Findings with one key are one change. A gate block added over the code default
    (`recovery_threshold:` with a value per metric) is one change, whatever the file."""
    if item.note and item.kind not in ("dropped", "margin"):
        return (item.kind, item.raw.split()[0] if item.raw.split() else "", item.new, item.note)
    return (item.kind, item.raw, item.old, item.new) if code else (str(item.line),)


def cut(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
