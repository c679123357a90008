"""Engine behaviour with small rules defined here (the real rule pack has its own cases)."""

from __future__ import annotations

from collections.abc import Iterable

from bot.core.config import Config, parse_config
from bot.core.engine import review
from bot.core.findings import Finding, Severity
from bot.core.report import Waiver
from rules import option_specs
from rules.base import Rule, RuleContext
from tests.conftest import make_snapshot


class FlagsWord(Rule):
    """Flags added lines containing BAD."""

    id = "silenced-test"  # a real id so config and suppressions accept it
    severity = Severity.WARNING

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        for changed in ctx.files():
            for line in changed.added_lines:
                if "BAD" in line.text:
                    yield self.finding("bad word", file=changed, line=line.new_no)


class Crashes(Rule):
    """Always crashes."""

    id = "shard-matrix"
    severity = Severity.ERROR

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        raise ZeroDivisionError("boom")


WORKFLOW = ".github/workflows/ci.yml"


def _review(head: str, base: str = "a: 1\n", config: Config | None = None,
            waivers: tuple[Waiver, ...] = (), path: str = WORKFLOW) -> list[Finding]:
    snapshot = make_snapshot([{"path": path, "base": base, "head": head}])
    return list(review(snapshot, config or Config(), [FlagsWord(), Crashes()], waivers).findings)


def test_crashing_rule_is_one_notice_and_others_still_report() -> None:
    findings = _review("a: 1\nb: BAD\n")
    rules = sorted((f.rule, str(f.severity)) for f in findings)
    assert rules == [("shard-matrix", "notice"), ("silenced-test", "warning")]
    crash = next(f for f in findings if f.rule == "shard-matrix")
    assert "ZeroDivisionError" in crash.message and "other rules still ran" in crash.message


def test_inline_suppression_same_line_and_line_above() -> None:
    head = ("a: 1\nb: BAD  # ci-stability: ignore[silenced-test] tracked in #12\n"
            "# ci-stability: ignore[silenced-test] known, see #13\nc: BAD\n")
    assert [f.rule for f in _review(head)] == ["shard-matrix"]


def test_suppression_without_reason_is_a_notice() -> None:
    findings = _review("a: 1\nb: BAD  # ci-stability: ignore[silenced-test]\n")
    assert any(f.rule == "suppression" and "no reason" in f.message for f in findings)
    assert not any(f.rule == "silenced-test" for f in findings)


def test_unused_and_unknown_suppressions_are_reported() -> None:
    findings = _review("a: 1\nb: ok  # ci-stability: ignore[silenced-test] old\n"
                       "c: ok  # ci-stability: ignore[no-such-rule] why\n")
    messages = [f.message for f in findings if f.rule == "suppression"]
    assert any("Unused suppression" in m for m in messages)
    assert any("unknown rule" in m for m in messages)


def test_config_ignore_and_disable_and_severity() -> None:
    config = parse_config(
        "rules:\n  shard-matrix: false\n  silenced-test: error\n"
        "ignore:\n  - {rule: silenced-test, paths: ['other/**'], reason: legacy}\n",
        option_specs(),
    )
    findings = _review("a: 1\nb: BAD\n", config=config)
    assert [(f.rule, f.severity) for f in findings] == [("silenced-test", Severity.ERROR)]
    config = parse_config(
        "ignore:\n  - {rule: silenced-test, paths: ['.github/**'], reason: legacy}\n",
        option_specs(),
    )
    assert [f.rule for f in _review("a: 1\nb: BAD\n", config=config)] == ["shard-matrix"]


def test_waiver_moves_finding_to_suppressed() -> None:
    snapshot = make_snapshot([{"path": WORKFLOW, "base": "a: 1\n", "head": "a: 1\nb: BAD\n"}])
    waiver = Waiver("silenced-test", None, "accepted risk", "maintainer", "2026-11-29T00:00Z")
    report = review(snapshot, Config(), [FlagsWord()], [waiver])
    assert report.findings == ()
    assert report.suppressed[0].source == "waiver" and report.suppressed[0].by == "maintainer"


def test_fingerprints_survive_line_shifts_and_separate_repeats() -> None:
    first = _review("a: 1\nb: BAD\n")
    shifted = _review("x: 0\ny: 0\na: 1\nb: BAD\n")
    fp = {f.fingerprint for f in first if f.rule == "silenced-test"}
    assert fp == {f.fingerprint for f in shifted if f.rule == "silenced-test"}
    twice = [f for f in _review("a: 1\nb: BAD\nb: BAD\n") if f.rule == "silenced-test"]
    assert len({f.fingerprint for f in twice}) == 2


def test_out_of_scope_pr_gets_no_findings_and_a_skipped_conclusion() -> None:
    snapshot = make_snapshot([{"path": "vllm/model.py", "base": "a\n", "head": "BAD\n"}])
    report = review(snapshot, Config(), [FlagsWord()])
    assert not report.in_scope and report.findings == () and report.conclusion == "skipped"


def test_conclusion_levels() -> None:
    snapshot = make_snapshot([{"path": WORKFLOW, "base": "a: 1\n", "head": "a: 1\nb: BAD\n"}])
    assert review(snapshot, Config(), [FlagsWord()]).conclusion == "neutral"
    strict = Config(fail_on=Severity.WARNING)
    assert review(snapshot, strict, [FlagsWord()]).conclusion == "failure"
    clean = make_snapshot([{"path": WORKFLOW, "base": "a: 1\n", "head": "a: 2\n"}])
    assert review(clean, Config(), [FlagsWord()]).conclusion == "success"
