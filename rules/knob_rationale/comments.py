"""Which `#` comments near a knob are about it.

A comment on the knob's line, or in the comment block directly above it, is the knob's.
A comment above another key ("# the dataset is gsm8k" over `task:`) belongs to that
key: it is no reason for a retune two lines further down unless it names the knob or
its value, or gives a reason the way a description would (OOM, flaky, timeout…).
"""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import Setting, adjacent_comment
from rules.analysis.lines import comment_text, known_lines

_RADIUS = 2
_REASON_RE = re.compile(
    r"\b(?:because|since|due to|so that|to avoid|to prevent|to keep|otherwise|"
    r"oom|out of memory|timed? ?out|timeouts?|flak\w*|fail\w*|crash\w*|hang\w*|"
    r"slow\w*|fragment\w*|see\s+#\d+|#\d+)\b|https?://",
    re.I,
)


# The knob's own container between a comment and the knob: `server_args: >-`, a
# decorator or call that opens on the line (`@intel_amx_benchmark(`, `extra_args=[`).
_OPENER_RE = re.compile(
    r"^\s*(?:@[\w.]+\(?|[\w.\[\]'\"-]+\s*[:=]\s*(?:[|>][+-]?|[\[({])?|[\w.]+\()\s*$")


# Words a comment uses to restate a value rather than explain it (`# 2 attempts * 20
# seconds = 40 seconds timeout`, `# 10 min total`).
_RESTATING_WORDS = frozenset((
    "ms", "msec", "s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes",
    "h", "hr", "hrs", "hour", "hours", "day", "days", "gb", "gib", "mb", "mib", "kb", "kib",
    "tokens", "token", "attempt", "attempts", "retry", "retries", "try", "tries", "times",
    "time", "timeout", "total", "max", "maximum", "minimum", "approx", "about", "around",
    "roughly", "each", "every", "per", "in", "of", "the", "a", "an", "x", "is", "e", "eg",
    "ie", "i",
))
_WORDS_RE = re.compile(r"[^\W\d_]+")


def _restates(comment: str, setting: Setting) -> bool:
    """A comment of numbers, units and the knob's own words only: arithmetic on the
    value, not a reason for it."""
    if not any(ch.isdigit() for ch in comment):
        return False
    own = set(re.split(r"[-_\s]+", setting.raw.lower()))
    return all(w.lower() in _RESTATING_WORDS or w.lower() in own
               for w in _WORDS_RE.findall(comment))


def _comment_line(text: str | None) -> bool:
    stripped = (text or "").strip()
    return stripped.startswith("#") and bool(comment_text(text or ""))


def _leads_to(changed: ChangedFile, lo: int, hi: int) -> bool:
    """Lines lo..hi hold only comments, blanks and the knob's own openers."""
    head = known_lines(changed)
    for n in range(lo, hi + 1):
        text = head.get(n)
        if text is None:
            return False
        if text.strip() and not (_comment_line(text) or _OPENER_RE.match(text)):
            return False
    return True


def _block(changed: ChangedFile, n: int) -> str:
    """The whole `#` comment block holding line n (a reason may span its lines)."""
    head = known_lines(changed)
    lo = hi = n
    while lo - 1 >= 1 and _comment_line(head.get(lo - 1)) and n - lo < 20:
        lo -= 1
    while _comment_line(head.get(hi + 1)) and hi - n < 20:
        hi += 1
    return " ".join(comment_text(head.get(i) or "") or "" for i in range(lo, hi + 1))


def _names(comment: str, setting: Setting) -> bool:
    lowered = comment.lower().replace("_", " ").replace("-", " ")
    name = setting.raw.lower().replace("_", " ").replace("-", " ").strip()
    value = setting.value.strip("'\"")
    return (bool(name) and name in lowered) or (len(value) >= 2 and value in comment)


def own_comment(changed: ChangedFile, setting: Setting) -> tuple[int, str] | None:
    """A prose comment near the setting that is about it (see the module docstring)."""
    first, last = min(setting.lines), max(setting.lines)
    head = known_lines(changed)
    for n in range(max(1, first - _RADIUS), last + _RADIUS + 1):
        text = head.get(n)
        if text is None or "#" not in text:
            continue  # no comment on the line: what `adjacent_comment` finds first, cheaply
        found = adjacent_comment(changed, (n,), radius=0)
        if found is None or _restates(found[1], setting):
            continue
        if first <= n <= last:
            return found  # on the knob's own line(s)
        if n < first and _leads_to(changed, n + 1, first - 1):
            return found  # the comment block directly above the knob (or its container)
        block = _block(changed, n)
        if _names(block, setting) or _REASON_RE.search(block):
            return found
    return None
