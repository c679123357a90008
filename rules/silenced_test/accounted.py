"""Whether a silencing hit is accounted for: tracked by an issue link beside it or in the
description, said by the description to run elsewhere, or undone by a revert."""

from __future__ import annotations

from rules.analysis.prtext import DescriptionLinks, description_relocates, reverted_change
from rules.silenced_test.gates import tracked
from rules.silenced_test.line_structure import SilencingView
from rules.silenced_test.removal_findings import subjects
from rules.silenced_test.silencing_detectors import SILENCE_REASON_RE, Hit


def reverts(title: str, body: str) -> bool:
    """A revert that names the change it undoes: whatever it removes or turns off, that
    change added (or turned on) and the revert restores what ran before it. The reverted
    PR is the reference."""
    return reverted_change(title, body) is not None


def _comment_top(view: SilencingView, first: int) -> int:
    """The first line of the run of comment lines that ends at `first` (a tracking note
    atop a commented-out block, above a context comment, still covers it)."""
    top = first
    while top > 1 and first - top < 8 and (view.get(top - 1) or "").lstrip().startswith("#"):
        top -= 1
    return top


def accounted(view: SilencingView, hit: Hit, links: DescriptionLinks, pr_text: str) -> bool:
    """Tracked by an issue link beside it or in the description, or (a removal) said
    by the description to run elsewhere or to duplicate what still runs."""
    top = _comment_top(view, min(hit.first or hit.line, hit.line))
    if any(tracked(view.get(m) or "") for m in range(top - 1, max(hit.end, hit.line) + 1)):
        return True
    if links.covers(hit.subject):
        return True
    return hit.verb in ("removed", "deleted") and description_relocates(
        pr_text, subjects(hit), SILENCE_REASON_RE) is not None
