"""The PR title and description as rules read them: does it claim a CI fix, show the
failing run, cite issues and PRs, give a reason for a change. Bodies are hostile
(pasted multi-MB logs): everything is capped and linear."""

from rules.analysis.prtext.ci_fix import ci_fix_phrase
from rules.analysis.prtext.evidence import failure_evidence, stress_statistics
from rules.analysis.prtext.explains import description_explains
from rules.analysis.prtext.references import DescriptionLinks, dedup_evidence, issue_link

__all__ = [
    "DescriptionLinks", "ci_fix_phrase", "dedup_evidence", "description_explains",
    "failure_evidence", "issue_link", "stress_statistics",
]
