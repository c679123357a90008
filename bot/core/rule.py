"""The engine's contract with a rule: what it is handed and what it must provide."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from bot.core.config import Config
from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile, PullRequestSnapshot


@dataclass(frozen=True)
class RuleContext:
    """Everything a rule may look at. There is deliberately no way to do I/O from here."""

    snapshot: PullRequestSnapshot
    config: Config
    rule_id: str
    options: Mapping[str, Any]

    def files(self, *surfaces: str) -> Iterator[ChangedFile]:
        """Changed files that still exist at head, optionally limited to some surfaces."""
        for changed in self.snapshot.files:
            if changed.status == "removed" or changed.binary or changed.surface is None:
                continue
            if surfaces and changed.surface not in surfaces:
                continue
            yield changed

    def option(self, name: str) -> Any:
        return self.options[name]


class Rule(Protocol):
    """What the engine needs of a rule; `rules.base.Rule` adds the authoring helpers."""

    @property
    def id(self) -> str: ...

    @property
    def severity(self) -> Severity: ...

    @property
    def options(self) -> Mapping[str, Any]: ...

    def check(self, ctx: RuleContext) -> Iterable[Finding]: ...

    def summary(self) -> str: ...

    def docs(self) -> str: ...


def doc_section(docs: str, title: str) -> str:
    """The body of one `Title\n-----` section of a rule's documentation, or ''."""
    match = re.search(
        rf"^{re.escape(title)}\s*\n[-=~]*\n?(.*?)(?=^\S[^\n]*\n[-=~]{{3,}}|\Z)",
        docs,
        re.S | re.M,
    )
    return match.group(1).strip() if match else ""
