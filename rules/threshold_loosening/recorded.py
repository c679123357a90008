"""Counts set below the value their own comment records as the old one:

```python
# Original repeats: AIME=32, GPQA=4
AIME_N = 4
GPQA_N = 2
```

The old value came from elsewhere (a base config this file now overrides), so the diff
has no old → new pair, but the author wrote the old value down. Read only from an added
comment that says so (original / previous / was / before / default) and names a count
(repeats, samples, runs, questions), for added `NAME = number` lines just below it whose
name, without a count suffix (`_N`, `_REPEATS`, …), is a key of the comment.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter

from bot.core.snapshot import Hunk
from rules.analysis.knobs import number
from rules.analysis.lines import comment_text
from rules.analysis.pycode import NUM, bare_assignment

_SAID_OLD_RE = re.compile(r"\b(?:original(?:ly)?|previous(?:ly)?|was|were|before|old|"
                          r"default|formerly)\b", re.I)
_COUNT_RE = re.compile(r"\b(?:repeats?|samples?|runs|questions|trials|iterations)\b", re.I)
_PAIR_RE = re.compile(rf"\b([A-Za-z][\w-]*)\s*[=:]\s*({NUM})\b")
_SUFFIX_RE = re.compile(r"_(?:n|num|repeats?|samples?|runs|count|k)$", re.I)
_REACH = 8  # lines below the comment
_TEXT = itemgetter(1)  # of a DiffLine


@dataclass(frozen=True)
class Recorded:
    """A count cut below the old value its comment records (one per value, as the
    rule says every other old → new pair)."""

    name: str
    old: str
    new: str
    comment: str
    line: int


def recorded_cuts(hunk: Hunk) -> Iterator[Recorded]:
    if "#" not in "\n".join(map(_TEXT, hunk.added)):
        return  # the comment is on an added line: one C-speed test spares the walk below
    lines = [ln for ln in hunk.lines if ln.new_no is not None]
    for i, line in enumerate(lines):
        if line.old_no is not None or "#" not in line.text:
            continue
        comment = comment_text(line.text)
        if not comment or not _SAID_OLD_RE.search(comment) or not _COUNT_RE.search(comment):
            continue
        olds = {key.lower(): value for key, value in _PAIR_RE.findall(comment)}
        for below in lines[i + 1 : i + 1 + _REACH]:
            if below.old_no is not None:
                break  # the added block ended
            assignment = bare_assignment(below.text)
            if assignment is None or below.new_no is None:
                continue
            key = _SUFFIX_RE.sub("", assignment[1]).lower()
            old = olds.get(key)
            before, after = number(old or ""), number(assignment[2])
            if key != assignment[1].lower() and before is not None and after is not None \
                    and after < before:
                yield Recorded(assignment[1], old or "", assignment[2], comment.strip(),
                               below.new_no)
