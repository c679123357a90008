"""The PR title and description as rules read them: does it show the
failing run, cite issues and PRs, give a reason for a change. Bodies are hostile
(pasted multi-MB logs): everything is capped and linear."""

from rules.analysis.prtext.evidence import failure_evidence, stress_statistics
from rules.analysis.prtext.explains import (
    description_explains,
    description_relocates,
    gives_reason,
    prose_sentences,
)
from rules.analysis.prtext.references import (
    DescriptionLinks,
    dedup_evidence,
    issue_link,
    reverted_change,
)

__all__ = [
    "DescriptionLinks", "dedup_evidence", "description_explains", "description_relocates",
    "failure_evidence", "gives_reason", "issue_link", "prose_sentences", "reverted_change",
    "stress_statistics",
]
