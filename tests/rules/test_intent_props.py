"""Property tests for CI-fix intent (rules/analysis/intent): a fix needs a failure tied to
CI; capacity, trigger, logging, report, schedule, auto-update, security and feature
work is not one, whatever the subject it names; any text is survivable."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.analysis.intent import ci_fix_phrase, described, squash_subjects, who_reads

# Subjects as real titles name them: a model, a job, a test file; none is a CI word.
subject = st.builds(
    lambda stem, n, tail: f"{stem}{n}{tail}",
    st.sampled_from(("glm", "qwen", "llama", "deepseek_v", "gemma", "mixtral", "phi")),
    st.integers(min_value=1, max_value=99),
    st.sampled_from(("", "-tp2", "_moe", "-fp8", "-vl")),
)
prefix = st.sampled_from(("[CI] ", "ci: ", "fix(ci): ", "[ci] fix: ", "CI: ", "[CI][Bugfix] "))

FIXES = (
    "Fix flaky {s} test",
    "fix the {s} nightly OOM",
    "Stabilize the {s} e2e job",
    "Skip failing {s} tests",
    "resolve {s} eval timeout in CI",
    "Fix {s} test failing on A3",
)
NOT_FIXES = (
    "Add {s} nightly coverage",
    "fix: do not run the {s} workflow on forks",
    "Fix the {s} accuracy dashboard",
    "Add logging to debug the flaky {s} test",
    "Update the {s} cron schedule",
    "Bump the {s} runner image",
    "Update vLLM LKG for {s}",
    "Pin {s} actions to a full commit SHA",
    "Fix typo in {s} docs",
    "Add more {s} runners",
    "Fix the {s} path filter",
    "Re-enable the {s} unit tests",
)


@settings(max_examples=200, deadline=None)
@given(prefix, subject, st.sampled_from(FIXES))
def test_a_named_failure_in_ci_is_a_fix(tag: str, name: str, template: str) -> None:
    title = tag + template.format(s=name)
    assert ci_fix_phrase(title, "") is not None, title


@settings(max_examples=300, deadline=None)
@given(prefix, subject, st.sampled_from(NOT_FIXES),
       st.sampled_from(("", "CI is flaky lately.", "Tests pass.")))
def test_other_ci_work_is_not_a_fix_under_any_tag(
    tag: str, name: str, template: str, body: str
) -> None:
    title = tag + template.format(s=name).removeprefix("fix: ")
    assert ci_fix_phrase(title, body) is None, title


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from(("move the cron to Sunday", "fix the report's row count",
                                 "set TZ for the nightly summary")))
def test_a_squashed_subject_naming_other_work_vetoes_a_bare_claim(name: str, other: str) -> None:
    title = f"[nightly] fix {name} job order"
    body = f"* fix {name} job order\n\n* {other}\n"
    assert squash_subjects(body) and not described(body)
    assert ci_fix_phrase(title, body) is None, body


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=2000), st.lists(st.text(max_size=20), max_size=3))
def test_any_text_is_survivable(title: str, body: str, labels: list[str]) -> None:
    phrase = ci_fix_phrase(title, body, labels)
    assert phrase is None or isinstance(phrase, str)
    if phrase is not None:
        assert who_reads(title, phrase) in ("This PR", "This PR's description")


@settings(max_examples=100, deadline=None)
@given(subject)
def test_a_body_sentence_is_not_quoted_as_the_title(name: str) -> None:
    title = f"Tidy the {name} config"
    body = f"This fixes the {name} nightly job, which has been failing since Monday."
    phrase = ci_fix_phrase(title, body)
    assert phrase is not None
    assert who_reads(title, phrase) == "This PR's description"
