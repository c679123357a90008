"""Which job or step a YAML hit belongs to, and whether that owner is one the PR adds.

A soft-fail (`continue-on-error: true`, Buildkite `soft_fail`) on a job or step the PR
adds, or in a workflow file it adds, silences nothing whatever its reason: nothing that
gated before stops gating (a scheduled job that runs the e2e suites only to collect their
durations, "continue even if some tests fail"). The same holds for a skip on a test the
PR adds (see base_tests). A soft-fail added to an existing job or step still fires, and
so does one on a step whose name line replaces a removed one (renamed in place). Other
hits on a new owner (`if: false`, a skip list) are flagged only when their reason says
the test fails and not that it is optional on purpose (`# non-blocking`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from rules.silenced_test.line_structure import SilencingView
from rules.silenced_test.silencing_detectors import SILENCE_REASON_RE, Hit


def owned(view: SilencingView, hit: Hit, yaml: bool) -> Iterator[Hit]:
    """Name the step or job; a brand-new step that starts out soft-failing silences nothing."""
    owner = view.owner(hit.line) if yaml else None
    if owner is None:
        yield hit
        return
    line = view.get(hit.line) or ""  # a reason may say optional on purpose: non-blocking
    new = view.changed.status == "added" or owner[1] in view.added
    if new and (not SILENCE_REASON_RE.search(line) or _ADVISORY_RE.search(line)):
        return
    # A soft-fail on a job or step the PR adds, whatever its reason: nothing that gated
    # before stops gating (as a skip on a test the PR adds, see base_tests). Not when the
    # owner's line replaces a removed one (a step renamed with its soft-fail added), and
    # other hits (`if: false`, a skip list) keep being judged by their reason.
    if new and hit.soft and (view.changed.status == "added" or not view.counterpart(
            owner[1], view.get(owner[1]) or "")):
        return
    preposition = "to" if hit.verb == "added" else "in"
    yield dataclasses.replace(hit, subject=hit.subject or owner[0],
                              where=hit.where or f" {preposition} `{owner[0]}`")


_ADVISORY_RE = re.compile(r"non-?blocking|advisory|informational|best[- ]effort", re.I)
