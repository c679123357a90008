"""One generic test runs every YAML case in tests/rules/cases/ (sqlfluff-style).

Each case file names a rule and lists cases: PR text, changed files (base/head texts or
a raw patch) and the findings expected *from that rule*. A case runs twice, with full
texts and from the patch alone, unless it restricts `modes`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.core.config import Config, parse_config
from bot.core.engine import review
from bot.core.repo_view import MappedRepoView
from rules import ALL_RULES, RULES_BY_ID, option_specs
from tests.conftest import make_snapshot

CASES_DIR = Path(__file__).parent / "cases"


def _load_cases() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("*.yml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        rule_id = doc["rule"]
        for case in doc["cases"]:
            for mode in case.get("modes", ["full", "patch"]):
                params.append(pytest.param(rule_id, case, mode,
                                           id=f"{rule_id}:{case['name']}:{mode}"))
    return params


def test_every_rule_has_cases() -> None:
    covered = {yaml.safe_load(p.read_text())["rule"] for p in CASES_DIR.glob("*.yml")}
    assert covered >= set(RULES_BY_ID), sorted(set(RULES_BY_ID) - covered)


@pytest.mark.parametrize(("rule_id", "case", "mode"), _load_cases())
def test_rule_case(rule_id: str, case: dict[str, Any], mode: str) -> None:
    snapshot = make_snapshot(
        case["files"], case.get("title", ""), case.get("body", ""), patch_only=mode == "patch"
    )
    if "repo_files" in case:  # the repository at the base revision (a RepoView)
        snapshot = dataclasses.replace(snapshot, repo_view=MappedRepoView(case["repo_files"]))
    config = (parse_config(yaml.safe_dump(case["config"]), option_specs())
              if "config" in case else Config())
    report = review(snapshot, config, ALL_RULES)
    crashes = [f for f in report.findings if "failed on this pull request" in f.message]
    assert not crashes, crashes
    got = [f for f in report.findings if f.rule == rule_id]
    expected = case.get("expect") or []
    summary = [(f.path, f.line, str(f.severity), f.message) for f in got]
    assert len(got) == len(expected), summary
    for finding, want in zip(got, expected, strict=True):
        if "path" in want:
            assert finding.path == want["path"], summary
        if "line" in want:
            assert finding.line == want["line"], summary
        if "severity" in want:
            assert str(finding.severity) == want["severity"], summary
        for fragment in _as_list(want.get("message")):
            assert fragment in finding.message, (fragment, finding.message)
        for fragment in _as_list(want.get("message_lacks")):  # e.g. an API the repo lacks
            assert fragment not in finding.message, (fragment, finding.message)
        if "confidence" in want:
            assert str(finding.confidence) == want["confidence"], summary
        if "suggestion" in want:
            assert finding.suggestion == want["suggestion"], finding.suggestion


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
