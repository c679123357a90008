"""failing-run-link: a CI fix must point at the failure it fixes."""

from __future__ import annotations

from collections.abc import Iterable

from bot.core.findings import Confidence, Finding, Severity
from rules.analysis.intent import described, read_ci_fix, who_reads
from rules.analysis.prtext import failure_evidence, stress_statistics
from rules.base import Rule, RuleContext

_AUTOMATION_NOTE = (
    " (The diff changes only repository automation — bots, slash commands, label or stale "
    "managers: if no test or build job failed, ignore this.)"
)


class FailingRunLink(Rule):
    """A CI-fix PR that gives no evidence of the failing run.

    Why it destabilizes CI
    ----------------------
    CI failures lie about their cause: in vLLM #51015 the pytest layer reported a
    20-minute server-start timeout, while the worker log of Buildkite #81913 showed the
    real crash, `CUDA out of memory. Tried to allocate 24.43 GiB` in FlashInfer's MoE
    workspace. A reviewer can only judge a fix against the failure it claims to fix; a
    PR that says "fix flaky eval" without the run lets a timeout bump or a retry hide
    an OOM, and nobody can later tell whether the fix worked. "Passed 50/50 locally"
    shows the fix holds on one machine, not what failed in CI.

    Flags
    -----
    A PR that says it fixes, stabilizes or unblocks CI or a flaky, failing, OOM-ing or
    timing-out job or test (`[CI]` title tags, flaky, stabilize, fix … CI, OOM,
    timeout) whose description has no CI run or job URL (Buildkite, GitHub Actions,
    CircleCI, Jenkins, GitLab, HUD), no run id and no pasted error/log excerpt:

        [CI] Fix flaky GLM-5.2 PCP eval

        Bumps the server start timeout. Passed 50/50 locally.

    A description that quotes the failure's root-cause line (an exception with its
    message, `No matching distribution found`, an NCCL watchdog timeout) shows the
    failure too. Without a description (an empty body, a squash message that only
    lists the commits' subjects, or one of only trailers such as `Signed-off-by:` and
    version stamps) the finding is medium confidence.

    A flake fix titled by its remedy ("[CI] Set seeds for e2e tests" whose description says
    the accuracy fluctuates under the tolerance), a test "temporarily" removed from CI (the
    run that made it unstable), failing tests commented out, a diff that only skips tests
    (skip markers, a step's `if:`: the run they failed in), the fix of a job that "takes too
    long" or has "no space" left in a diff of CI and test files only, a bracketed tag fixing
    an upstream or CI break (`[FIX_DUE_UPSTREAM] fix for upstream PR …`,
    `[FIX_FOR_VLLM_LATEST]`) or the same in words ("Fix the failing introduced by upstream
    22685"), a fixed failure in a title that names CI in another clause ("Fix deepseek v2
    failing + update CI …"), a test made stable, a fixed compound failure
    ("startup_failures") or break of a scanner or scheduled job ("Fix Scorecard publish
    break"), fixes of a CI named as a compound's last part ("3 hourly-CI fixes"), a test fix
    stated in the title whatever trailers the body holds ("Hardcoded env variables to fix
    spec decoding e2e tests"), and a `fix:` retuning a threshold whose description says the
    test intermittently fails are CI fixes. There is no failing run to link for a workaround
    the title removes ("Remove the X workaround in the tests": cleanup once the bug is
    fixed), tests that fail only when run on their own (CI runs the suite), a limit imposed
    whose description names no failure ("[CI] Limit `MAX_JOBS` in the install", "CI: Add
    timeout for Nightly docker release": preventive; "Fix timeout in …" names one),
    a `fix(ci):` type naming improvements, a bare `[CI]` tag whose only run link is the PR's
    own validation run, a description bullet fixing a scanner warning ("Fixes CodeQL warning
    …"), a failure the new behaviour reacts to or handles ("adaptive cadence: 24h when
    failing", "retry failed jobs", "upload logs on failure", "Handle upload failures"), a
    diff that only deletes skip markers ("fix skipped e2e test"), a failure analysis or
    report feature, a CI fix the description names as a side effect of other work ("this
    also fixes the CI error"), or a fix to repository automation alone (PR bots,
    slash-command and cherry-pick workflows, label and stale managers); when such an
    automation fix names a failing test or build, the finding is medium confidence.

    Prefer
    ------
    Link the failing run and quote the root-cause line from its log:

        Fails in https://buildkite.com/vllm/ci/builds/81913 (profile run):

        ```
        torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 24.43 GiB.
        ```
    """

    id = "failing-run-link"
    severity = Severity.WARNING

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        snapshot = ctx.snapshot
        reading = read_ci_fix(snapshot)
        if reading is None or failure_evidence(snapshot.body):
            return
        phrase = reading.phrase
        message = (
            f"{who_reads(snapshot.title, phrase)} reads as a CI fix (\"{phrase}\") but links "
            "no failing run: add the "
            "Buildkite build or GitHub Actions run/job URL (or its run id) and paste the "
            "root-cause lines of its log, so reviewers can check that the change fixes "
            "the actual failure."
        )
        stats = stress_statistics(snapshot.body)
        if stats:
            message += (
                f" Stress results (\"{stats}\") show the fix holds locally, not what "
                "failed in CI."
            )
        known = described(snapshot.body)
        if not known:
            message += (
                " (Only the commit message was available, with no PR description: if the "
                "PR's description links the run, ignore this.)"
            )
        if reading.tentative:
            message += _AUTOMATION_NOTE
        yield self.finding(message, key="failing-run-link:missing-failing-run",
                           confidence=Confidence.HIGH if known and not reading.tentative
                           else Confidence.MEDIUM)
