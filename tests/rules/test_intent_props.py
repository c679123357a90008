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


@settings(max_examples=100, deadline=None)
@given(subject)
def test_a_compound_failure_word_names_a_failure(name: str) -> None:
    body = f"A reusable-workflow caller token cannot be narrower than the {name} permissions."
    assert ci_fix_phrase(f"fix(ci): fix {name} reusable-workflow startup_failures", body)
    assert ci_fix_phrase(f"fix(ci): fix {name} reusable-workflow nesting", body) is None


@settings(max_examples=100, deadline=None)
@given(subject, st.sampled_from(("[CI] Make test_{s} UT stable",
                                 "Make the {s} e2e test more stable",
                                 "[CI] make {s} nightly tests stable")))
def test_making_a_test_stable_is_a_fix(name: str, template: str) -> None:
    assert ci_fix_phrase(template.format(s=name), "") is not None
    assert ci_fix_phrase(f"Make the {name} API stable", "") is None


@settings(max_examples=100, deadline=None)
@given(subject, st.sampled_from(("resolve no space", "fix No space left on device",
                                 "fix disk full")))
def test_a_full_runner_disk_is_a_job_failure_when_the_diff_is_ci(name: str, remedy: str) -> None:
    title = f"[{name}-accuracy] Change model path to {remedy}"
    assert ci_fix_phrase(title, "", ci_diff=True) is not None, title
    assert ci_fix_phrase(title, "", ci_diff=False) is None, title


@settings(max_examples=100, deadline=None)
@given(subject, st.sampled_from(("Scorecard publish break", "CodeQL upload failure",
                                 "nightly cron job failing")))
def test_a_fixed_break_of_a_scanner_or_schedule_job_is_a_fix(name: str, broken: str) -> None:
    assert ci_fix_phrase(f"[CI] Fix {name} {broken}", "") is not None
    # In a report or a log the failure is what they show, not what broke.
    assert ci_fix_phrase(f"[CI] Fix the {name} failure summary report", "") is None
    assert ci_fix_phrase(f"[CI] Fix {name} failure log truncation", "") is None


@settings(max_examples=100, deadline=None)
@given(subject, st.sampled_from(("CI gate improvements", "nightly workflow enhancements")))
def test_a_fix_type_naming_improvements_is_not_a_fix(name: str, improved: str) -> None:
    assert ci_fix_phrase(f"fix(ci): {name} {improved}", "Closes #1118") is None
    assert ci_fix_phrase(f"fix(ci): fix {name} CI gate failure", "") is not None


@settings(max_examples=100, deadline=None)
@given(subject, st.sampled_from(("fail when run individually", "fail when run alone",
                                 "break when executed in isolation")))
def test_tests_failing_only_when_run_alone_are_not_a_ci_failure(name: str, how: str) -> None:
    title = f"Fix for individual {name} unit tests"
    body = f"Without this change the {name} test cases {how}; they pass in the whole suite."
    assert ci_fix_phrase(title, body) is None
    assert ci_fix_phrase(title, f"The {name} unit tests fail in the nightly CI.") is not None


@settings(max_examples=100, deadline=None)
@given(subject)
def test_a_fix_retuning_a_knob_for_a_described_flake_is_a_fix(name: str) -> None:
    flake = f"The {name} CI test intermittently fails because the accuracy fluctuates."
    assert ci_fix_phrase(f"fix: lower {name} accuracy threshold to 0.60", flake) is not None
    assert ci_fix_phrase(f"fix: lower {name} accuracy threshold to 0.60", "") is None
    # Without the fix type it retunes a limit, to prevent what might happen.
    preventive = f"This prevents stuck or runaway {name} jobs in CI."
    assert ci_fix_phrase(f"Increase {name} timeout from 6h to 12h", preventive) is None


@settings(max_examples=100, deadline=None)
@given(subject)
def test_a_bare_ci_tag_with_only_a_validation_run_is_not_a_fix(name: str) -> None:
    title = f"[CI] {name} ep aime2025"
    tested = ("Add an aime2025 benchmark test.\n\n# How was this patch tested?\n\n"
              "have tested in https://github.com/o/r/actions/runs/24224275741/job/70722125476")
    assert ci_fix_phrase(title, tested) is None
    assert ci_fix_phrase(title, f"The {name} nightly test fails with OOM.") is not None


@settings(max_examples=100, deadline=None)
@given(subject)
def test_a_claimed_fix_describing_an_intermittent_failure_is_not_other_work(name: str) -> None:
    title = f"Fix CI container name collision for {name} matrix jobs"
    lead = f"Multiple matrix jobs on the same runner used a hardcoded {name} container name."
    assert ci_fix_phrase(title, lead) is None  # runner work, as far as the text says
    cause = " That collision was the root cause of the intermittent GPU OOM errors."
    assert ci_fix_phrase(title, lead + cause) is not None


@settings(max_examples=100, deadline=None)
@given(subject)
def test_a_body_fixing_a_scanner_warning_is_not_a_ci_fix(name: str) -> None:
    title = f"test({name}): per-parser unit tests for {name} detectors"
    warning = "- Fixes CodeQL warning 'Workflow does not contain permissions' by adding a block"
    assert ci_fix_phrase(title, f"- Add {name} tests\n{warning}\n- Move tests to CPU") is None
    assert ci_fix_phrase(title, f"- Add {name} tests\n- Fixes the failing {name} workflow\n"
                         "- Move tests to CPU") is not None


# A failure as the condition a new behaviour reacts to: a cadence, a back-off, a retry.
CONDITIONS = (
    "adaptive {s} hourly cadence (8h when healthy, 24h when failing)",
    "back off the {s} nightly if the job fails",
    "upload the {s} logs on failure",
    "retry failed {s} jobs",
    "rerun the {s} tests on test failure",
    "handle {s} upload failures and skip dependent matrix steps",
    "tolerate transient {s} download errors",
    "recover from {s} job failures",
    "guard against {s} checkpoint load errors",
)
# A concrete breakage stays a fix, even under a handling verb.
FIXED_FAILURES = (
    "Fix {s} upload failures",
    "handle {s} upload failures caused by the new bucket layout",
    "handle the crash in the {s} e2e test",
    "{s} upload fails since #123",
)


@settings(max_examples=200, deadline=None)
@given(prefix.filter(lambda p: "fix" not in p.lower() and "bug" not in p.lower()), subject,
       st.sampled_from(CONDITIONS))
def test_a_failure_the_change_reacts_to_is_not_a_fix(tag: str, name: str, template: str) -> None:
    title = tag + template.format(s=name)
    assert ci_fix_phrase(title, "") is None, title
    # The failure before the condition is the one fixed: "test_x fails when run on A2".
    assert ci_fix_phrase(f"{tag}Fix {name} test failing when run on A2", "") is not None


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(("[CI] ", "CI: ")), subject, st.sampled_from(FIXED_FAILURES))
def test_a_failure_handled_that_names_a_breakage_is_a_fix(tag: str, name: str,
                                                          template: str) -> None:
    title = tag + template.format(s=name)
    assert ci_fix_phrase(title, "") is not None, title


# "Fix A and B e2e test configurations": one fix verb, coordinated objects sharing a head.
COORDINATED = (
    "Fix pipeline parallel and {s} e2e test configurations",
    "Fix {s}, hybrid kvcache e2e tests",
    "fix: {s} and pipeline parallel e2e test configs",
)
# A second clause with its own verb is other work; "with" adds, it does not coordinate.
OTHER_WORK = (
    "Fix {s} scheduling and add hybrid kvcache e2e tests",
    "Fix {s} scheduler crash with new e2e tests",
    "Fix {s} loading and test it on TPU",
    "Fix {s} weights and updated e2e tests",
)


@settings(max_examples=100, deadline=None)
@given(subject, st.sampled_from(COORDINATED), st.sampled_from(OTHER_WORK))
def test_a_fix_of_coordinated_test_objects_is_a_ci_fix(name: str, fixed: str,
                                                       other: str) -> None:
    assert ci_fix_phrase(fixed.format(s=name), "Signed-off-by: a <a@x.com>") is not None
    assert ci_fix_phrase(other.format(s=name), "") is None, other


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(("[Spec decoding] ", "[Model] ", "")), subject,
       st.lists(st.sampled_from(TRAILERS), min_size=1, max_size=4), names)
def test_trailers_do_not_say_what_else_a_claimed_test_fix_is(tag: str, name: str,
                                                             lines: list[str], who: str) -> None:
    """"Signed-off-by: … <x-email@…>" is not a PR about e-mail reports."""
    title = f"{tag}Hardcoded env variables to fix {name} e2e tests."
    body = "\n".join(t.format(n=who, v=3) for t in lines) + "\nSigned-off-by: x <your-email@x.com>"
    assert ci_fix_phrase(title, body) is not None, body
