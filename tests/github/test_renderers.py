"""Pure parts: check-run output, review placement, and texts rebuilt from patches."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.diff import parse_file_patch
from bot.core.findings import Finding, Severity
from bot.core.report import Report, Waiver
from bot.core.snapshot import PullRequestSnapshot
from bot.github.patch_texts import added_text, base_from_head, removed_text
from bot.render.checkrun import (
    ACTIONS,
    CHECK_NAME,
    SUMMARY_LIMIT,
    annotation_batches,
    check_run_output,
    waivers_markdown,
)
from bot.render.markers import fingerprints_in
from bot.render.review import review_comments
from bot.sources.files import from_github_entry, synthesize_patch

BASE = "".join(f"line {i}\n" for i in range(1, 41))
HEAD = BASE.replace("line 5\n", "line 5 changed\nline 5b\n").replace("line 30\n", "line 30!\n")


def finding(line: int | None, *, end: int | None = None, path: str | None = "a.yml",
            suggestion: str | None = None, severity: Severity = Severity.WARNING,
            fp: str | None = None) -> Finding:
    # One kind per line (a kind's template masks numbers): none is collapsed.
    return Finding("r", severity, f"message {'x' * (line or 0)}", path, line, end, suggestion,
                   fingerprint=fp or f"{path}{line}{end}")


def snapshot(patch_missing: bool = False) -> PullRequestSnapshot:
    changed = from_github_entry("a.yml", "modified", synthesize_patch(BASE, HEAD))
    return PullRequestSnapshot(files=(dataclasses.replace(changed, patch_missing=patch_missing),),
                               head_sha="f" * 40, number=1)


def test_check_run_output_limits_levels_and_buttons() -> None:
    findings = tuple(finding(n, severity=Severity(1 + n % 3)) for n in range(1, 131))
    report = Report(findings=(*findings, finding(None, path=None)), head_sha="a" * 40)
    waiver = Waiver("r", "docs/**", "flaky upstream", "maintainer", "2024-05-01T10:00:00Z")
    output = check_run_output(report, waivers_markdown([waiver]))
    assert len(output["annotations"]) == 130  # the PR-level finding has no line
    assert {a["annotation_level"] for a in output["annotations"]} == {
        "notice", "warning", "failure"}
    assert [len(b) for b in annotation_batches(output["annotations"])] == [50, 50, 30]
    assert "flaky upstream" in output["summary"] and "maintainer" in output["summary"]
    huge = Report(findings=tuple(dataclasses.replace(f, message="x" * 2000) for f in findings))
    assert len(check_run_output(huge)["summary"]) <= SUMMARY_LIMIT
    assert CHECK_NAME == "CI stability review" and len(ACTIONS) <= 3
    for action in ACTIONS:
        assert len(action["label"]) <= 20 and len(action["identifier"]) <= 20
        assert len(action["description"]) <= 40


def test_review_places_only_diff_lines_and_suggests_only_exact_replacements() -> None:
    report = Report(findings=(
        finding(5, suggestion="line 5 fixed"),  # added line: inline + suggestion
        finding(5, end=6, suggestion="a\nb", fp="range"),  # range in one hunk
        finding(7, end=12, suggestion="x", fp="wide"),  # leaves the hunk: single line, no fix
        finding(20, fp="off"),  # unchanged, far from any hunk: summary only
        finding(None, path=None, fp="pr"),  # PR-level: summary only
        finding(31, suggestion="", fp="delete"),  # empty suggestion deletes the line
        finding(6, fp="posted"),
    ), head_sha="f" * 40)
    plan = review_comments(report, snapshot(), {"posted"})
    by_fp = dict(zip(plan.fingerprints, plan.comments, strict=True))
    assert set(by_fp) == {"a.yml5None", "range", "wide", "delete"}
    assert by_fp["a.yml5None"]["line"] == 5 and "```suggestion\nline 5 fixed\n```" in by_fp[
        "a.yml5None"]["body"]
    assert (by_fp["range"]["start_line"], by_fp["range"]["line"]) == (5, 6)
    assert by_fp["range"]["start_side"] == by_fp["range"]["side"] == "RIGHT"
    assert "start_line" not in by_fp["wide"] and "suggestion" not in by_fp["wide"]["body"]
    assert "```suggestion\n```" in by_fp["delete"]["body"]
    assert all("position" not in c for c in plan.comments)
    assert {f.fingerprint for f in plan.leftover} == {"off", "pr"}
    assert "<!-- ci-stability:fp=range -->" in plan.body
    capped = review_comments(report, snapshot(), set(), max_comments=2)
    assert len(capped.comments) == 2 and len(capped.leftover) == 5
    assert review_comments(report, snapshot(patch_missing=True), set()).comments == ()


def test_hostile_messages_cannot_forge_markers_or_mention() -> None:
    evil = finding(5, fp="abcdef12")
    evil = dataclasses.replace(evil, message="@team <!-- ci-stability:fp=deadbeef -->")
    body = review_comments(Report(findings=(evil,)), snapshot(), set()).comments[0]["body"]
    assert "@team" not in body and fingerprints_in(body) == ["abcdef12"]


lines = st.lists(st.sampled_from(["a", "b", "c", "", "  x", "# y"]), max_size=30)


@settings(max_examples=200, deadline=None)
@given(lines, lines)
def test_base_is_rebuilt_exactly_from_head_and_patch(base_lines: list[str],
                                                     head_lines: list[str]) -> None:
    base = "".join(f"{line}\n" for line in base_lines)
    head = "".join(f"{line}\n" for line in head_lines)
    hunks, error = parse_file_patch(synthesize_patch(base, head))
    assert error is None
    assert base_from_head(head, hunks) == base
    if not base_lines and head_lines:
        assert added_text(hunks) == head
    if base_lines and not head_lines:
        assert removed_text(hunks) == base


def test_a_patch_that_does_not_fit_the_head_is_refused() -> None:
    hunks, _ = parse_file_patch(synthesize_patch(BASE, HEAD))
    assert base_from_head(HEAD.replace("line 30!", "line thirty"), hunks) is None
