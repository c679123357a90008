"""Scoring findings against labels: pure, so the counts can be checked by hand.

Per rule and case:
- label `fires: false`: every finding of the rule is a false positive;
- label `fires: true` with spots: each spot is found (TP) or missed (FN); a finding
  matching no spot is a false positive (a second comment on one change counts);
- label `fires: true` without spots: at least one finding is a TP, none is a FN;
- no label: the rule is unjudged on that case and its findings are ignored.
A finding matches a spot on the same path within `LINE_SLACK` lines (or anywhere in
its line range); a PR-level spot (no path) matches any finding of the rule.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.core.findings import Finding
from bot.evaluation.corpus import Case, Label, Spot

LINE_SLACK = 3


@dataclass(frozen=True)
class Outcome:
    kind: str  # "tp" | "fp" | "fn"
    rule: str
    case: str
    repo: str
    sample: str
    split: str
    path: str | None
    line: int | None
    text: str  # the finding's message (tp, fp) or the label's why (fn)
    why: str = ""  # the label's why


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, kind: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass
class Scores:
    outcomes: list[Outcome] = field(default_factory=list)
    cases: int = 0
    ordinary_cases: int = 0

    def tally(self, *, rule: str | None = None, repo: str | None = None,
              split: str | None = None, sample: str | None = None) -> Tally:
        t = Tally()
        for o in self.outcomes:
            if ((rule is None or o.rule == rule) and (repo is None or o.repo == repo)
                    and (split is None or o.split == split)
                    and (sample is None or o.sample == sample)):
                t.add(o.kind)
        return t

    def false_per_20_ordinary(self) -> float | None:
        if not self.ordinary_cases:
            return None
        return 20 * self.tally(sample="ordinary").fp / self.ordinary_cases


def _matches(finding: Finding, spot: Spot) -> bool:
    if spot.path is None:
        return True
    if finding.path != spot.path:
        return False
    if spot.line is None or finding.line is None:
        return True
    end = finding.end_line or finding.line
    return finding.line - LINE_SLACK <= spot.line <= end + LINE_SLACK


def score_rule(case: Case, label: Label, findings: Sequence[Finding]) -> list[Outcome]:
    def outcome(kind: str, path: str | None, line: int | None, text: str) -> Outcome:
        return Outcome(kind, label.rule, case.id, case.repo, case.sample, case.split,
                       path, line, text, label.why)

    if not label.fires:
        return [outcome("fp", f.path, f.line, f.message) for f in findings]
    if not label.at:
        if findings:
            return [outcome("tp", findings[0].path, findings[0].line, findings[0].message)]
        return [outcome("fn", None, None, label.why)]
    out: list[Outcome] = []
    used: set[int] = set()
    for spot in label.at:
        hit = next((i for i, f in enumerate(findings) if i not in used and _matches(f, spot)),
                   None)
        if hit is None:
            out.append(outcome("fn", spot.path, spot.line, label.why))
        else:
            used.add(hit)
            out.append(outcome("tp", findings[hit].path, findings[hit].line,
                               findings[hit].message))
    out += [outcome("fp", f.path, f.line, f.message)
            for i, f in enumerate(findings) if i not in used]
    return out


def score_case(case: Case, findings: Iterable[Finding], rules: Iterable[str]) -> list[Outcome]:
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_rule[finding.rule].append(finding)
    out: list[Outcome] = []
    for rule in rules:
        label = case.labels.get(rule)
        if label is not None:
            out += score_rule(case, label, by_rule.get(rule, []))
    return out
