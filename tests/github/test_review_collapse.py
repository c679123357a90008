"""A coordinated edit (one kind of finding in many places) gets PER_KIND inline comments
and one line of the review body; every finding stays in the check run, summary, JSON."""

from __future__ import annotations

import hashlib
import json

from bot.core.findings import Confidence, Finding, Severity
from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.render import jsonout, markdown
from bot.render.checkrun import check_run_output
from bot.render.markers import fingerprints_in
from bot.render.review import PER_KIND, review_comments
from bot.sources.files import from_github_entry, synthesize_patch

RULE = "threshold-loosening"


def fp(name: str) -> str:
    """A fingerprint as the engine makes them (hex: the markers carry only hex)."""
    return hashlib.sha256(name.encode()).hexdigest()[:16]



def _snapshot(paths: list[str]) -> PullRequestSnapshot:
    files = []
    for path in paths:
        base = "model_name: org/m\nmetrics:\n- name: acc\n  value: 0.9\nlimit: 1000\n"
        head = "model_name: org/m\nmetrics:\n- name: acc\n  value: 0.8\nlimit: 250\n"
        files.append(from_github_entry(path, "modified", synthesize_patch(base, head)))
    return PullRequestSnapshot(files=tuple(files), head_sha="c" * 40, number=7)


def _gate(path: str, old: str, new: str) -> Finding:
    return Finding(RULE, Severity.WARNING,
                   f"Gate `acc value` lowered {old} → {new}: results that failed before now "
                   "pass. No reason is given next to it or in the PR description.",
                   path, 4, fingerprint=fp(f"gate-{path}"), details=(("value", f"{old} → {new}"),))


def _limit(path: str) -> Finding:
    return Finding(RULE, Severity.WARNING,
                   "Sample count `limit` cut 1000 → 250: the score comes from fewer samples. "
                   "No reason is given next to it or in the PR description.",
                   path, 5, fingerprint=fp(f"limit-{path}"), details=(("limit", "1000 → 250"),))


def test_one_kind_beyond_per_kind_collapses_into_one_body_line() -> None:
    paths = [f"configs/m{i}.yaml" for i in range(8)]
    gates = [_gate(p, f"0.{90 - i}", f"0.{80 - i}") for i, p in enumerate(paths)]
    limits = [_limit(p) for p in paths[:2]]
    # The same words with another reason are another kind.
    argued = Finding(RULE, Severity.WARNING, gates[0].message.replace(
        "No reason is given next to it or in the PR description.", "Reason: “noisy”."),
        paths[7], 5, fingerprint=fp("argued"))
    low = Finding(RULE, Severity.WARNING, gates[0].message, paths[6], 5, fingerprint=fp("low"),
                  confidence=Confidence.MEDIUM)
    report = Report(findings=(*gates, *limits, argued, low), head_sha="c" * 40)
    plan = review_comments(report, _snapshot(paths), set())
    inline = [fp for fp in plan.fingerprints if any(fp in c["body"] for c in plan.comments)]
    assert set(inline) == {*(fp(f"gate-{p}") for p in paths[:PER_KIND]),
                           fp("limit-configs/m0.yaml"), fp("limit-configs/m1.yaml"), fp("argued")}
    assert len(plan.comments) == len(inline)
    assert [f.fingerprint for f in plan.collapsed] == [fp(f"gate-{p}") for p in paths[PER_KIND:]]
    assert [f.fingerprint for f in plan.leftover] == [fp("low")]  # medium: summary only
    collapsed = [ln for ln in plan.body.split("\n\n") if "more like the inline" in ln]
    assert len(collapsed) == 1
    assert "5 more" in collapsed[0] and "Gate `…` lowered … → …" in collapsed[0]
    for i in range(PER_KIND, 8):
        assert f"`configs/m{i}.yaml:4` (0.{90 - i} → 0.{80 - i})" in collapsed[0]
    # Collapsed findings count as posted (the body names them): no drip of 3 per push.
    assert set(fingerprints_in(plan.body)) == {*inline, *(f.fingerprint for f in plan.collapsed)}
    # Nothing is lost elsewhere: every finding is in the check run, summary and JSON.
    assert len(check_run_output(report, "")["annotations"]) == len(report.findings)
    summary = markdown.render(report)
    assert all(f"configs/m{i}.yaml" in summary for i in range(8))
    assert len(json.loads(jsonout.render(report))["findings"]) == len(report.findings)


def test_kinds_already_commented_collapse_on_a_later_push() -> None:
    paths = [f"configs/m{i}.yaml" for i in range(5)]
    gates = [_gate(p, "0.9", "0.8") for p in paths]
    report = Report(findings=(*gates, _limit(paths[0])), head_sha="d" * 40)
    posted = {fp(f"gate-{p}") for p in paths[:PER_KIND]}
    plan = review_comments(report, _snapshot(paths), posted)
    assert [c["path"] for c in plan.comments] == [paths[0]]  # the limit cut only
    assert [f.fingerprint for f in plan.collapsed] == [fp(f"gate-{p}") for p in paths[PER_KIND:]]
    # Nothing else to comment on: no review, and the findings stay for the summary.
    alone = review_comments(Report(findings=tuple(gates)), _snapshot(paths), posted)
    assert alone.comments == () and alone.body == ""
    assert {f.fingerprint for f in alone.leftover} == {fp(f"gate-{p}") for p in paths[PER_KIND:]}
