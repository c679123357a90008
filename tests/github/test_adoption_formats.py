"""GitHub's and other tools' conventions: SARIF (validated against the official schema),
rdjson, lintrunner, the check run's annotation cap and the summary's row budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

from bot.cli import main
from bot.core.findings import Finding, Severity
from bot.core.report import Report
from bot.render import FORMATS, render
from bot.render import markdown as md
from bot.render.checkrun import MAX_ANNOTATIONS, SUMMARY_LIMIT, check_run_output
from bot.render.sarif import DESCRIPTION_LIMIT
from rules import ALL_RULES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.json") if p.name != "expected.json")
SARIF_SCHEMA = json.loads((ROOT / "tests/data/sarif/sarif-schema-2.1.0.json").read_text())


def review_example(path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["review", "--pr", str(path), "--format", fmt, "--fail-level", "none"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_is_valid_sarif_with_every_finding_located(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(review_example(example, "sarif", capsys))
    errors = sorted(Draft4Validator(SARIF_SCHEMA).iter_errors(doc), key=str)
    assert errors == []
    findings = json.loads(review_example(example, "json", capsys))["findings"]
    run = doc["runs"][0]
    assert run["automationDetails"]["id"] == "ci-stability/"
    assert len(run["results"]) == len(findings)  # PR-level ones too: code scanning shows them
    assert run["invocations"][0]["toolExecutionNotifications"] == []
    for result, finding in zip(run["results"], findings, strict=True):
        hash_ = result["partialFingerprints"]["primaryLocationLineHash"]
        assert len(hash_.split(":")[0]) == 16 and hash_.endswith(":1")
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        if finding["path"] is None:
            assert result["message"]["text"].startswith("(pull request)") and uri
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["helpUri"].startswith("https://")
        assert len(rule["shortDescription"]["text"]) <= DESCRIPTION_LIMIT
        assert len(rule["fullDescription"]["text"]) <= DESCRIPTION_LIMIT


def test_sarif_line_hash_follows_content_not_line_numbers() -> None:
    moved = [Finding("r", Severity.WARNING, "m", "a.yml", line, fingerprint="f" * 32)
             for line in (3, 30)]
    docs = [json.loads(render(Report((f,), anchor_path="a.yml"), "sarif", ALL_RULES))
            for f in moved]
    hashes = {d["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"]
              for d in docs}
    assert len(hashes) == 1
    other = Finding("r", Severity.WARNING, "m", "a.yml", 3, fingerprint="e" * 32)
    doc = json.loads(render(Report((other,)), "sarif", ALL_RULES))
    assert doc["runs"][0]["results"][0]["partialFingerprints"]["primaryLocationLineHash"] \
        not in hashes


def test_rdjson_places_every_finding_and_keeps_suggestions_linewise(
    capsys: pytest.CaptureFixture[str]
) -> None:
    findings = (
        Finding("r", Severity.ERROR, "bad", "ci.yml", 4, 5, suggestion="a: 1\nb: 2\n"),
        Finding("p", Severity.NOTICE, "describe the failing run"),
    )
    doc = json.loads(render(Report(findings, anchor_path="ci.yml"), "rdjson", ALL_RULES))
    assert doc["source"]["name"] == "ci-stability" and doc["severity"] == "ERROR"
    first, second = doc["diagnostics"]
    assert first["location"] == {"path": "ci.yml",
                                 "range": {"start": {"line": 4}, "end": {"line": 5}}}
    assert first["suggestions"] == [{"range": first["location"]["range"], "text": "a: 1\nb: 2"}]
    assert first["code"]["value"] == "r"
    assert second["severity"] == "INFO" and second["location"]["path"] == "ci.yml"
    assert second["message"].startswith("(pull request)")


def test_lintrunner_emits_one_lint_message_per_line() -> None:
    findings = (Finding("r", Severity.NOTICE, "m", "a.py", 3, suggestion="x = 1\n"),
                Finding("p", Severity.WARNING, "pr"))
    lines = render(Report(findings), "lintrunner", ALL_RULES).splitlines()
    messages = [json.loads(line) for line in lines]
    keys = {"path", "line", "char", "code", "severity", "name", "original", "replacement",
            "description"}
    assert all(set(m) == keys for m in messages)
    assert [(m["severity"], m["name"], m["path"]) for m in messages] == [
        ("advice", "r", "a.py"), ("warning", "p", None)]
    assert "x = 1" in messages[0]["description"] and messages[0]["code"] == "CISTABILITY"


@pytest.mark.parametrize(("level", "code"), [("any", 1), ("info", 1), ("notice", 1),
                                              ("warning", 0), ("none", 0)])
def test_fail_level_accepts_reviewdogs_names(level: str, code: int, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    example = ROOT / "examples/sglang-xeon-flagged.json"
    data = json.loads(review_example(example, "json", capsys))
    notices = [f for f in data["findings"] if f["severity"] == "notice"]
    assert notices  # the example has a notice; a stricter rule set would change `code`
    rules = ",".join(sorted({f["rule"] for f in notices}))
    argv = ["review", "--pr", str(example), "--rules", rules, "--fail-level", level,
            "--format", "json"]
    assert main(argv) == code
    capsys.readouterr()


def test_all_formats_dispatch_from_one_place() -> None:
    report = Report((Finding("r", Severity.WARNING, "m", "a.yml", 1),))
    assert {"rdjson", "lintrunner"} <= set(FORMATS)
    assert all(render(report, fmt, ALL_RULES) for fmt in FORMATS)


def test_annotations_go_up_to_the_cap_and_the_rest_are_counted_honestly() -> None:
    findings = tuple(Finding("r", Severity.WARNING, f"m{i}", "a.yml", i + 1)
                     for i in range(MAX_ANNOTATIONS + 234))
    output = check_run_output(Report(findings))
    assert len(output["annotations"]) == MAX_ANNOTATIONS == 1_000
    assert "the other 234 are left out" in output["summary"]
    assert "--format json" in output["summary"]
    assert len(output["summary"]) <= SUMMARY_LIMIT


def test_a_long_summary_row_is_trimmed_and_hides_no_later_row() -> None:
    findings = (
        Finding("long", Severity.ERROR, "x" * 5_000, "a.yml", 1),
        *(Finding("short", Severity.WARNING, f"short {i}", "b.yml", i + 1) for i in range(20)),
    )
    body = md.render(Report(findings), limit=3_000)
    assert len(body) <= 3_000
    assert all(f"short {i} |" in body for i in range(20))
    assert "x" * md.MIN_CELL not in body.replace("x" * (md.MIN_CELL - 1) + "…", "")
    assert "| ❌ error | `long` |" in body and "more findings not shown" not in body
