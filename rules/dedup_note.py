"""dedup-note: a CI fix must say which other PRs and issues it checked for the same failure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from bot.core.findings import Confidence, Finding, Severity
from rules.analysis.intent import described, follows_up_own_change, read_ci_fix, who_reads
from rules.analysis.prtext import dedup_evidence
from rules.base import Rule, RuleContext

_TEMPLATE_HEADING = "### Duplicate-work check"
# Files whose names are what people search for: eval configs, tests, CPU tests.
_NAMED_SURFACES = ("eval-config", "cpu-test", "test")


# A commit message without the PR description: what the PR said is unknown.
_NO_DESCRIPTION = (
    " (Only the commit message was available, with no PR description: if the PR's "
    "description has this check, ignore this.)"
)


_AUTOMATION_NOTE = (
    " (The diff changes only repository automation — bots, slash commands, label or stale "
    "managers: if no test or build job failed, ignore this.)"
)


def _search_terms(ctx: RuleContext) -> list[str]:
    terms: list[str] = []
    for changed in ctx.files(*_NAMED_SURFACES):
        stem = PurePosixPath(changed.path).stem
        if stem and stem not in terms and stem not in ("conftest", "__init__"):
            terms.append(stem)
            if len(terms) == 3:  # a 100,000-file PR must not make this quadratic
                break
    return terms


# A PR template's checklist item, ticked: "- [x] Search for similar PRs" (verl's
# template writes "[done]"). Unticked, it is only the template.
_CHECKLIST_RE = re.compile(
    r"^[ \t]*[-*][ \t]*\[(?:x|done|✓|✔)\][ \t]*(?:searched|search|looked|checked|check)\b"
    r"[^\n]{0,60}?\b(?:similar|duplicate|existing|related|open)\b",
    re.I | re.M,
)


# "Paste at least one query link here: ..." left as the template wrote it.
_ASKS_FOR_LINK_RE = re.compile(r"\b(?:paste|link here|query link)\b", re.I)
_LINK_RE = re.compile(r"https?://\S|(?<![\w&])#\d+")


def _ticked_search(body: str) -> bool:
    """A ticked "searched for similar PRs" item; one whose template asks for the query
    link counts only with a link on it."""
    for match in _CHECKLIST_RE.finditer(body[:200_000]):
        line_end = body.find("\n", match.end())
        line = body[match.start(): line_end if line_end >= 0 else len(body)]
        if not _ASKS_FOR_LINK_RE.search(line) or _LINK_RE.search(line):
            return True
    return False


def _heading_for(pattern: str) -> str | None:
    try:
        return _TEMPLATE_HEADING if re.search(pattern, _TEMPLATE_HEADING) else None
    except re.error:
        return None


class DedupNote(Rule):
    """A CI-fix PR whose description does not show a search for duplicate work.

    Why it destabilizes CI
    ----------------------
    A red or flaky job attracts several fixes at once: one person raises a timeout,
    another skips the test, a third changes the allocator, and the fixes land on top of
    each other or undo each other. vLLM #51015 ("[CI] Stabilize GLM-5.2 PCP evaluation")
    shows the habit that prevents this: its description lists #50791, #49196 and #34553
    and says in one line each why none of them is the same OOM, so the reviewer approved
    without re-doing that search. Naming only the PR that caused the breakage
    ("regressed by #49294", "after the MoE refactor in <PR>") is root-cause analysis,
    not a duplicate check.

    Flags
    -----
    A PR that fixes, stabilizes, unblocks or retunes CI (same trigger as
    `failing-run-link`; routine maintenance such as action bumps, new coverage or
    logging is exempt) whose description has none of: a section whose heading matches
    `dedup_heading` in `.github/ci-stability.yml`, a tracking issue (`Closes #…`,
    `Fixes #…`, an issue URL), a ticked template item such as `- [x] Search for
    similar PRs`, or a reference to another PR/issue with a verdict (`part 2 of #4479`,
    `supersedes #12`, `#50791 — a different workspace`):

        [CI] Stabilize GLM-5.2 PCP evaluation

        The TP1/PCP4 eval OOMs since #49294; this enables expandable segments.

    Without a description (an empty body, a squash message that only lists the
    commits' subjects, or one of only trailers such as `Signed-off-by:` and version
    stamps) the finding is medium confidence: the PR may have said it.

    Not asked: the fix of the author's own immediately preceding change ("quick fix for
    last update to pre-merge", "follow-up to #4521" in the title or the description's
    opening), which nobody else is racing to fix; a diff that only deletes skip markers
    ("fix skipped e2e test": turning a test back on restores coverage); a failure
    analysis or report feature ("[CI] Failure analyze for …"); and fixes to repository
    automation alone (PR bots, slash-command and cherry-pick workflows, label and stale
    managers) unless the text names a failing test or build, then at medium confidence.
    Nor a PR whose description calls the CI fix a side effect of the work its title
    names ("Follow up UniformTypeKVCacheSpecs" + "This also fixes the CI issue about
    `TypeError: …`"). A flake fix titled by its remedy ("[CI] Set seeds for e2e tests"
    whose description says the accuracy fluctuates), a test "temporarily" removed from
    CI, failing tests commented out, a diff that only skips tests (skip markers, a
    step's `if:`), the fix of a job that "takes too long" or has "no space" left in a
    diff of CI and test files only, a bracketed tag fixing an upstream or CI break
    (`[FIX_DUE_UPSTREAM]`, `[CI_FIX]`, `[FIX_FOR_VLLM_LATEST]`) or the same in words ("Fix
    the failing introduced by upstream 22685"), a fixed failure in a title that names CI in
    another clause ("Fix deepseek v2 failing + update CI …"), a test made stable
    ("[CI] Make test_platform UT stable"), a fixed compound failure ("fix reusable-workflow
    startup_failures") or break of a scanner or scheduled job ("Fix Scorecard publish
    break"), fixes of a CI named as a compound's last part ("3 hourly-CI fixes"), and a
    `fix:` retuning a threshold whose description says the test intermittently fails are
    CI fixes. Not CI fixes: tests that fail only when run on their own ("fail when run
    individually": CI runs the suite), a limit imposed whose description names no failure
    ("[CI] Limit `MAX_JOBS` in the install", "CI: Add timeout for Nightly docker release":
    preventive; "Fix timeout in …", "job times out", "hangs" name one), a `fix(ci):` type
    naming improvements ("P0 CI gate improvements"), a workaround the title removes
    ("Remove the X workaround in the tests": cleanup once the bug is fixed), a bare
    `[CI]` tag whose only run link is the PR's own validation run ("have tested in
    <run>"), a description bullet fixing a scanner warning ("Fixes CodeQL warning …"), and
    a failure the new behaviour reacts to or handles ("adaptive cadence: 24h when failing",
    "retry failed jobs", "upload logs on failure", "Handle upload failures"): nothing is
    being fixed. A test fix stated in the title ("Hardcoded env variables to fix spec
    decoding e2e tests", "Fix A and B e2e test configurations") is one whatever trailers
    its body holds (their e-mail addresses are not an e-mail report).

    Prefer
    ------
    A short section listing what was searched and a one-line verdict per hit:

        ### Duplicate-work check
        Searched open/merged PRs and issues for `GLM-5.2`, `PCP`, `getWorkspaceInfo`:
        - #50791 — DCP sparse-MLA workspace; different workspace, not a duplicate.
        - #34553 — indexer OOM while serving, not the start-up MoE workspace OOM.
    """

    id = "dedup-note"
    severity = Severity.WARNING

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        snapshot = ctx.snapshot
        reading = read_ci_fix(snapshot)
        if reading is None or dedup_evidence(snapshot.body, ctx.config.dedup_heading):
            return
        if _ticked_search(snapshot.body) or follows_up_own_change(snapshot.title, snapshot.body):
            return
        phrase = reading.phrase
        known = described(snapshot.body)
        terms = ", ".join(f"`{t}`" for t in _search_terms(ctx)) or "the failing job/test"
        heading = _heading_for(ctx.config.dedup_heading)
        section = heading or f"a section whose heading matches `{ctx.config.dedup_heading}`"
        yield self.finding(
            f"{who_reads(snapshot.title, phrase)} reads as a CI fix (\"{phrase}\") but its "
            "description has no "
            "duplicate-work check, so reviewers cannot tell whether another open or merged "
            "PR or issue already addresses this failure. Add, for example:\n\n"
            f"{section}\n"
            f"Searched open/merged PRs and issues for {terms}:\n"
            "- #<number> — <one-line verdict: different root cause / same failure, "
            "superseded / not a duplicate>\n\n"
            "or link the tracking issue with `Closes #<issue>`." + _NO_DESCRIPTION * (not known)
            + _AUTOMATION_NOTE * reading.tentative,
            key="dedup-note:missing-duplicate-work-check",
            confidence=Confidence.HIGH if known and not reading.tentative else Confidence.MEDIUM,
        )
