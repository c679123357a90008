"""The publication journal, as the publishing flows see it: per pull request, each
write to GitHub is recorded as an intent before it is sent and as a result once its
answer is in.

A worker killed between the two leaves an intent without a result: the write may or
may not have landed. The next worker to publish the PR (on any replica: the App keeps
the journal in its store, bot/store/journal.py) then reads GitHub back for just that
step (the check run by its `external_id`, the review and the summary by their
markers, the annotation count of the run) instead of writing it again. A step with a
result hands over what the write created (ids, fingerprints), so nothing is
published twice even when the PR's state was not saved.

Steps are named per PR: `check:<head>`, `annotations:<check run id>`,
`review:<head>`, `summary`. The App clears a PR's journal once the state that
supersedes it is saved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Entry:
    intent: dict[str, Any]
    result: dict[str, Any] | None = None  # None: sent (or about to be), outcome unknown


class Journal(Protocol):
    def entries(self) -> dict[str, Entry]:
        """Every step recorded for the PR."""

    def intend(self, step: str, intent: dict[str, Any]) -> None:
        """Record, durably, that the write `step` is about to be sent."""

    def record(self, step: str, result: dict[str, Any]) -> None:
        """Record, durably, what the write `step` did (may be called again as it grows)."""


@dataclass
class MemoryJournal:
    """A journal that lives as long as one run (the CLI, tests): nothing to recover."""

    steps: dict[str, Entry] = field(default_factory=dict)

    def entries(self) -> dict[str, Entry]:
        return dict(self.steps)

    def intend(self, step: str, intent: dict[str, Any]) -> None:
        self.steps[step] = Entry(dict(intent))

    def record(self, step: str, result: dict[str, Any]) -> None:
        known = self.steps.get(step)
        self.steps[step] = Entry(known.intent if known else {}, dict(result))


def check_step(head: str) -> str:
    return f"check:{head}"


def annotations_step(check_id: int) -> str:
    return f"annotations:{check_id}"


def review_step(head: str) -> str:
    return f"review:{head}"


SUMMARY_STEP = "summary"
