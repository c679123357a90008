"""The scorer's contract, on hand-made labels and findings (no engine involved)."""

from __future__ import annotations

import pytest

from bot.core.findings import Finding, Severity
from bot.evaluation.corpus import CorpusError, parse_case
from bot.evaluation.score import Scores, score_case


def _case(labels: dict[str, object], sample: str = "ordinary") -> object:
    return parse_case({"id": "o/r@1", "repo": "o/r", "sample": sample, "split": "dev",
                       "pr": {"files": []}, "labels": labels}, "case")


def _f(rule: str, path: str | None = "a.yml", line: int | None = 10) -> Finding:
    return Finding(rule, Severity.WARNING, f"{rule} says so", path, line)


def _kinds(labels: dict[str, object], findings: list[Finding], rules: list[str]) -> list[str]:
    case = _case(labels)
    return sorted(o.kind for o in score_case(case, findings, rules))  # type: ignore[arg-type]


def test_a_finding_on_a_negative_label_is_a_false_positive() -> None:
    assert _kinds({"r": {"fires": False, "why": "clean"}}, [_f("r"), _f("r", line=20)],
                  ["r"]) == ["fp", "fp"]


def test_spots_are_matched_within_the_slack_and_extras_are_false_positives() -> None:
    labels = {"r": {"fires": True, "why": "x", "at": [{"path": "a.yml", "line": 12},
                                                      {"path": "b.yml", "line": 3}]}}
    assert _kinds(labels, [_f("r", line=10), _f("r", line=40)], ["r"]) == ["fn", "fp", "tp"]


def test_a_pr_level_spot_matches_any_finding_of_the_rule() -> None:
    labels = {"r": {"fires": True, "why": "x", "at": [{"path": None, "line": None}]}}
    assert _kinds(labels, [_f("r", path=None, line=None)], ["r"]) == ["tp"]
    assert _kinds(labels, [], ["r"]) == ["fn"]


def test_unjudged_rules_and_other_rules_are_ignored() -> None:
    labels = {"r": {"fires": False, "why": "clean"}}
    assert _kinds(labels, [_f("other"), _f("unjudged")], ["r", "unjudged"]) == []


def test_precision_recall_and_noise_on_ordinary_changes() -> None:
    scores = Scores(cases=2, ordinary_cases=2)
    scores.outcomes += score_case(_case({"r": {"fires": True, "why": "x"}}),  # type: ignore[arg-type]
                                  [_f("r")], ["r"])
    scores.outcomes += score_case(_case({"r": {"fires": False, "why": "y"}}),  # type: ignore[arg-type]
                                  [_f("r")], ["r"])
    tally = scores.tally(rule="r")
    assert (tally.tp, tally.fp, tally.fn) == (1, 1, 0)
    assert tally.precision == 0.5 and tally.recall == 1.0
    assert scores.false_per_20_ordinary() == 10.0


@pytest.mark.parametrize("bad", [
    {"id": "x", "repo": "o/r"},
    {"id": "x", "repo": "o/r", "pr": {}, "labels": {"r": {"fires": "yes"}}},
    {"id": "x", "repo": "o/r", "pr": {}, "labels": {"r": {"fires": True, "at": [{"line": "3"}]}}},
])
def test_malformed_cases_are_named_errors(bad: dict[str, object]) -> None:
    with pytest.raises(CorpusError):
        parse_case(bad, "case.json")
