"""What the App remembers per pull request between reviews, and how it is recovered.

The store keeps it as JSON. A copy travels hidden in the summary comment (and the
fingerprints in the review bodies), so the stateless CLI, or an App whose database
was lost, can find out from GitHub what it already published.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

from bot.render import markers

STATE_VERSION = 1
MAX_POSTED = 5_000
MAX_EMBEDDED_FINDINGS = 300  # keeps the hidden copy small next to the summary table
MAX_REVIEW_SHAS = 100


@dataclass
class CheckRef:
    id: int
    head_sha: str
    status: str  # "in_progress" | "completed"
    annotations: int = 0
    # Which annotation list those are (bot/github/check_run.py): a re-run whose list
    # is the same appends nothing, one whose list differs needs a fresh run.
    annotations_digest: str | None = None


@dataclass
class Known:
    """A finding as the summary remembers it (enough to say it was resolved)."""

    rule: str
    path: str | None
    line: int | None
    severity: str


@dataclass
class PrState:
    head_sha: str | None = None
    inputs_digest: str | None = None
    report_digest: str | None = None
    check: CheckRef | None = None
    posted: list[str] = field(default_factory=list)  # fingerprints inline on the PR
    review_shas: list[str] = field(default_factory=list)  # heads that got a review
    open: dict[str, Known] = field(default_factory=dict)  # fingerprint -> current finding
    resolved: dict[str, Known] = field(default_factory=dict)  # fixed since the last head
    summary_id: int | None = None
    summary_digest: str | None = None
    notes: list[str] = field(default_factory=list)  # what could not be published, and why
    # True once what was published on the PR is known (from GitHub or a previous publish);
    # a state made up by start_check/fail_check alone does not know it.
    history_known: bool = False

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["version"] = STATE_VERSION
        data["posted"] = self.posted[-MAX_POSTED:]
        data["review_shas"] = self.review_shas[-MAX_REVIEW_SHAS:]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> PrState:
        """Tolerant: a missing, old or damaged state is treated as no state."""
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            return cls()
        try:
            check = data.get("check")
            return cls(
                head_sha=data.get("head_sha"),
                inputs_digest=data.get("inputs_digest"),
                report_digest=data.get("report_digest"),
                check=CheckRef(**check) if isinstance(check, dict) else None,
                posted=[str(fp) for fp in data.get("posted") or []],
                review_shas=[str(sha) for sha in data.get("review_shas") or []],
                open={fp: Known(**k) for fp, k in (data.get("open") or {}).items()},
                resolved={fp: Known(**k) for fp, k in (data.get("resolved") or {}).items()},
                summary_id=data.get("summary_id"),
                summary_digest=data.get("summary_digest"),
                history_known=bool(data.get("history_known")),
            )
        except (TypeError, AttributeError):
            return cls()

    def embedded(self) -> str:
        """A hidden marker carrying what the CLI needs to publish idempotently."""
        data = {
            "version": STATE_VERSION, "head_sha": self.head_sha,
            "inputs_digest": self.inputs_digest, "report_digest": self.report_digest,
            "check": asdict(self.check) if self.check else None,
            "open": {fp: asdict(k) for fp, k in list(self.open.items())[:MAX_EMBEDDED_FINDINGS]},
            "resolved": {
                fp: asdict(k) for fp, k in list(self.resolved.items())[:MAX_EMBEDDED_FINDINGS]
            },
        }
        return markers.state(data)

    @classmethod
    def from_summary(cls, body: str) -> PrState:
        data = markers.state_in(body)
        return cls() if data is None else cls.from_dict(data)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]
