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
    "Temporarily removing the {s} test from CI",
    "temporarily skip test_{s} in the nightly",
    "Comment out the still failing {s} tests",
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
    "fix skipped {s} e2e test",
    "Fix the {s} tests skipped on A2",
    "Failure analysis for the {s} nightly",
    "Analyze the {s} nightly failures",
    "Fix the comments in the {s} test",
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


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(("FIX_DUE_UPSTREAM", "CI_FIX", "HOTFIX-CI", "Bugfix for upstream",
                        "FIX TEST", "FIX_FOR_VLLM_LATEST")),
       st.integers(min_value=1000, max_value=99999))
def test_a_bracketed_tag_fixing_a_ci_or_upstream_break_is_a_claim(tag: str, number: int) -> None:
    assert ci_fix_phrase(f"[{tag}] fix for upstream PR {number}", "") is not None


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(("UPSTREAM", "UPSTREAM_SYNC", "Bugfix", "Model", "VLLM_LATEST")),
       st.integers(min_value=1000, max_value=99999))
def test_a_tag_without_both_fix_and_break_context_is_not(tag: str, number: int) -> None:
    assert ci_fix_phrase(f"[{tag}] fix for upstream PR {number}", "") is None


FLAKE_BODIES = (
    "The accuracy fluctuates between runs and sometimes falls under the threshold.",
    "Without a seed the sampled outputs are non-deterministic and the test is flaky.",
    "The score occasionally drops below 0.62 on A2.",
)
OTHER_BODIES = ("Lets a user pass --seed to reproduce a benchmark.", "", "Adds a CLI flag.")


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from(("[CI] Set seeds for {s} e2e tests", "Fix seed in the {s} test",
                                 "Make the {s} accuracy test deterministic")),
       st.sampled_from(FLAKE_BODIES))
def test_a_determinism_remedy_for_a_described_flake_is_a_fix(
    name: str, template: str, body: str
) -> None:
    assert ci_fix_phrase(template.format(s=name), body) is not None


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from(("[CI] Set seeds for {s} e2e tests",
                                 "Add a seed option to the {s} test script")),
       st.sampled_from(OTHER_BODIES))
def test_a_determinism_remedy_without_a_flake_is_not(name: str, template: str, body: str) -> None:
    assert ci_fix_phrase(template.format(s=name), body) is None


TRAILERS = ("Signed-off-by: {n} <{n}@example.com>", "Co-authored-by: {n} <{n}@example.com>",
            "---------", "- vLLM version: v0.{v}.0",
            "- vLLM main:\nhttps://github.com/vllm-project/vllm/commit/c60e6137f0bf2034853919b3a",
            "Reviewed-by: {n}", "Change-Id: I{v}abc")
names = st.sampled_from(("alice", "bob", "Chendi Xue", "q.li"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(TRAILERS), min_size=1, max_size=5), names,
       st.integers(min_value=1, max_value=20))
def test_a_body_of_only_trailers_is_no_description(lines: list[str], name: str,
                                                   version: int) -> None:
    body = "\n\n".join(t.format(n=name, v=version) for t in lines)
    assert not described(body), body
    assert described("Culprit commit: https://github.com/vllm-project/vllm/pull/27022\n\n" + body)


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from(("This also fixes the CI issue about `TypeError` in {s}.",
                                 "It also fixes the failing {s} nightly job.",
                                 "Additionally, this resolves the {s} CI failure.")))
def test_a_ci_fix_named_as_a_side_effect_is_not_the_prs_intent(name: str, sentence: str) -> None:
    title = f"[Hybrid KV] Follow up the {name} KV cache specs"
    assert ci_fix_phrase(title, sentence.format(s=name)) is None
    main = sentence.format(s=name).replace("also ", "").replace("Additionally, this", "This")
    assert ci_fix_phrase(title, main) is not None, main


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from(("takes too long", "runs too slowly", "is way too slow",
                                 "took too long on one machine")))
def test_a_fixed_job_that_takes_too_long_is_a_fix_when_the_diff_is_ci(name: str,
                                                                      complaint: str) -> None:
    title = f"fix the problem the {name} accuracy task {complaint}"
    assert ci_fix_phrase(title, "", ci_diff=True) is not None, title
    assert ci_fix_phrase(title, "", ci_diff=False) is None, title
    assert ci_fix_phrase(f"Increase the {name} timeout from 6h to 12h", "", ci_diff=True) is None
