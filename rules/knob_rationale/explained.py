"""Which of a file's asked-about changes are explained: a prose comment beside the
knob, a description sentence that names it with a reason (or names the change in a
bullet of a PR that states its purpose), a title's speed purpose, or, for a timeout,
a description that says the PR fixes the failure the limit produces."""

from __future__ import annotations

from collections.abc import Iterable

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import Categories, Change, Description
from rules.knob_rationale.comments import own_comment
from rules.knob_rationale.judging import names_its_failure, subjects
from rules.knob_rationale.mentions import Mentions
from rules.knob_rationale.purpose import serves_speed
from rules.knob_rationale.sweeps import signature


def explained(changed: ChangedFile, changes: Iterable[Change], texts: tuple[Description, Mentions],
              title: str, categories: Categories | None) -> set[tuple[str, str, str]]:
    """The signatures (knob, old, new) of the changes whose reason is given. The same
    retune repeated in the file (one decorator per test) is covered by the comment
    written once, so a signature stands for every copy."""
    description, mentions = texts
    out: set[tuple[str, str, str]] = set()
    for change in changes:
        setting = change.setting
        if (own_comment(changed, setting) or description.explains(subjects(change))
                or mentions.explains(change) or serves_speed(title, change)
                or names_its_failure(description.text, change, categories)):
            out.add(signature(setting, change))
    return out
