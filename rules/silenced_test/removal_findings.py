"""How removal hits become findings: the words a description may name a removal by,
and one finding per head line."""

from __future__ import annotations

import dataclasses
import re

from rules.silenced_test.silencing_detectors import NOT_RUN, Hit

_SUBJECT_TOKEN_RE = re.compile(r"[\w./-]*test[\w./-]*", re.I)


def subjects(hit: Hit) -> list[str]:
    """How a description may name what a removal removed: the subject, and the test-ish
    words of it (`make test_integrations` → `test_integrations`)."""
    words = [w.strip("./") for w in _SUBJECT_TOKEN_RE.findall(hit.subject)
             if any(c in w for c in "_./")]
    return [hit.subject, *words]


def one_per_line(hits: list[Hit]) -> list[Hit]:
    """One finding per change: removals anchored at one head line (a step rewritten,
    several jobs folded into one) become one finding that lists every removed command."""
    merged: dict[tuple[int, str, str, str], Hit] = {}
    out: list[Hit] = []
    for hit in hits:
        if hit.verb not in ("removed", "deleted"):
            out.append(hit)
            continue
        key = (hit.line, hit.verb, hit.where, hit.why)
        first = merged.get(key)
        if first is None:
            merged[key] = hit
            out.append(hit)
        elif hit.what not in first.what.split(", "):
            why = "so these tests no longer run in CI" if first.why == NOT_RUN else first.why
            grown = dataclasses.replace(first, what=f"{first.what}, {hit.what}", why=why,
                                        medium=first.medium and hit.medium)
            out[out.index(first)] = grown
            merged[key] = grown
    return out
