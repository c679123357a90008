"""Property tests for where a title's fixed failure gets its CI context (rules/analysis/
intent): CI named in another clause, a break upstream introduced, a fix verb sharing its
object ("Fix and refactor CI testing"), CI as a compound's last part ("hourly-CI fixes");
a workaround that a title removes is cleanup, and a limit imposed is preventive unless a
failure is named."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.analysis.intent import ci_fix_phrase

subject = st.builds(
    lambda stem, n, tail: f"{stem}{n}{tail}",
    st.sampled_from(("glm", "qwen", "llama", "deepseek_v", "gemma", "mixtral", "phi")),
    st.integers(min_value=1, max_value=99),
    st.sampled_from(("", "-tp2", "_moe", "-fp8", "-vl")),
)
number = st.integers(min_value=100, max_value=99999)


@settings(max_examples=200, deadline=None)
@given(subject, number, st.sampled_from((
    "Fix the failing introduced by upstream {n}",
    "Fix {s} failure caused by upstream #{n}",
    "fix the {s} breakage from upstream PR {n}",
    "Resolve errors introduced by the upstream {s} refactor",
)))
def test_a_fixed_break_upstream_introduced_is_a_fix(name: str, n: int, template: str) -> None:
    title = template.format(s=name, n=n)
    assert ci_fix_phrase(title, "") is not None, title


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from((
    "Fix {s} failing + update CI with early exit",
    "Fix {s} failure, make the nightly exit early",
    "Fix {s} error and tidy the CI script",
)))
def test_a_fixed_failure_beside_a_named_ci_is_a_fix(name: str, template: str) -> None:
    title = template.format(s=name)
    assert ci_fix_phrase(title, "") is not None, title


@settings(max_examples=200, deadline=None)
@given(subject, number, st.sampled_from((
    "Fix {s} loading failure and add a test",  # a product fix with its test
    "Sync with upstream {n}",
    "Port the upstream {s} change",
    "Fix {s} error handling",
    "Fix {s} failing on long prompts",
)))
def test_a_failure_without_ci_or_upstream_context_is_not(name: str, n: int, template: str) -> None:
    title = template.format(s=name, n=n)
    assert ci_fix_phrase(title, "") is None, title


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(("Fix and refactor", "Fix and Refactoring", "fix and clean up")),
       st.sampled_from(("CI testing", "the e2e tests", "the nightly workflow")))
def test_a_fix_verb_shares_its_object_across_and(verbs: str, thing: str) -> None:
    title = f"{verbs} {thing}"
    assert ci_fix_phrase(title, "") is not None, title


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from((
    "[SpecDecode] Remove _disable_shardy_for_{s} workaround in speculative decoding tests",
    "Remove the {s} workaround from the e2e test",
    "Drop the old {s} hack in test_{s}.py",
    "Revert the {s} hotfix in CI tests",
    "clean up the {s} workaround in tests",
)))
def test_removing_a_workaround_is_cleanup(name: str, template: str) -> None:
    title = template.format(s=name)
    assert ci_fix_phrase(title, "") is None, title


@settings(max_examples=100, deadline=None)
@given(subject, st.sampled_from((
    "Remove flag to work around the flaky {s} test",
    "[CI] Remove {s} from the suite to workaround the failing nightly",
)))
def test_a_removal_that_works_around_a_failure_is_still_a_fix(name: str, template: str) -> None:
    title = template.format(s=name)
    assert ci_fix_phrase(title, "") is not None, title


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from(("hourly", "nightly", "AMD", "gpu")),
       st.sampled_from(("{n} {w}-CI fixes", "Fix the {w}-CI failures of {s}",
                        "{w}-CI fix for {s}")))
def test_ci_named_as_the_last_part_of_a_compound_is_ci(name: str, word: str,
                                                       template: str) -> None:
    title = template.format(s=name, w=word, n=3)
    assert ci_fix_phrase(title, "") is not None, title
    # Whatever the tag, a subject that names no CI and no failure is an adaptation.
    adapted = f"[FIX_FOR_VLLM_CUSTOM=0a1b2c3d] Adapt {name} to the upstream rename"
    assert ci_fix_phrase(adapted, "") is None


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from(("MAX_JOBS", "max_workers", "the build parallelism",
                                 "MAX_NUM_JOBS")),
       st.sampled_from(("[CI][E2E] Limit {k} in the {s} install",
                        "[CI] Cap {k} for the {s} wheel build")))
def test_imposing_a_limit_is_a_fix_only_where_a_failure_is_named(name: str, knob: str,
                                                                 template: str) -> None:
    title = template.format(s=name, k=knob)
    restated = f"This PR sets {knob} to 23 for every {name} install step of the E2E workflow."
    assert ci_fix_phrase(title, restated) is None, title
    failed = f"The {name} wheel build OOMs on the 32-core runners, so the e2e job fails."
    assert ci_fix_phrase(title, failed) is not None, title
    # Retuning a limit that was hit stays a claimed fix.
    assert ci_fix_phrase(f"[CI] Increase the {name} e2e timeout", restated) is not None


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from(("CI: ", "[CI] ", "ci: ", "[CI][Nightly] ")),
       st.sampled_from(("Add timeout for the {s} nightly docker release",
                        "Add a 60 min timeout to the {s} e2e step",
                        "Set `timeout-minutes` for the {s} docker build",
                        "Add a time limit to the {s} nightly job",
                        "Limit the {s} nightly job timeout to 60 minutes")))
def test_a_time_limit_added_or_set_is_preventive_unless_a_failure_is_named(
        name: str, tag: str, template: str) -> None:
    title = tag + template.format(s=name)
    assert ci_fix_phrase(title, "", ci_diff=True) is None, title
    restated = f"This PR sets timeout-minutes: 60 on the {name} build and test steps."
    assert ci_fix_phrase(title, restated, ci_diff=True) is None, title
    hung = f"The {name} nightly docker build hangs for hours and never finishes."
    assert ci_fix_phrase(title, hung, ci_diff=True) is not None, title


@settings(max_examples=200, deadline=None)
@given(subject, st.sampled_from(("CI: ", "[CI] ", "")),
       st.sampled_from(("Fix timeout in the {s} nightly docker release",
                        "Fix the {s} e2e job timing out",
                        "The {s} nightly job times out",
                        "{s} nightly test hangs",
                        "Add timeout to the stuck {s} nightly job",
                        "Add a timeout since the {s} nightly test timed out",
                        "Add retry for the {s} eval timeout in CI")))
def test_a_timeout_that_happened_is_still_a_fix(name: str, tag: str, template: str) -> None:
    title = tag + template.format(s=name)
    assert ci_fix_phrase(title, "", ci_diff=True) is not None, title
