"""silenced-test: a test or job made to stop failing instead of being fixed."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from bot.core.findings import Confidence, Finding, Severity
from bot.core.snapshot import ChangedFile
from rules.analysis.lines import MAX_LINE, known_lines
from rules.analysis.prtext import DescriptionLinks
from rules.analysis.yamlscan import is_yaml
from rules.base import Rule, RuleContext
from rules.silenced_test.accounted import accounted, reverts
from rules.silenced_test.backends import new_backends
from rules.silenced_test.base_tests import defined_names
from rules.silenced_test.commented import commented_hit
from rules.silenced_test.go_tests import go_hits
from rules.silenced_test.line_structure import SilencingView, has_any_hint
from rules.silenced_test.matrix_entries import matrix_entry_hits, says_taken_out
from rules.silenced_test.owned import owned as _owned
from rules.silenced_test.pr_failing import says_failing
from rules.silenced_test.removal_findings import one_per_line
from rules.silenced_test.removals import (
    PullRequestAdds,
    fixes_tests,
    may_remove_tests,
    removal_hits,
)
from rules.silenced_test.silencing_detectors import (
    SILENCE_REASON_RE,
    Hit,
    arg_hits,
    python_hits,
    yaml_hits,
)


def _known_text(changed: ChangedFile) -> str:
    """The head-side lines we know (full text or patch), one per line."""
    return "\n".join(known_lines(changed).values())


def _suffix(changed: ChangedFile) -> str:
    """`.yaml`, `.py`, `.txt`, `.sh` (a CI shell script, with or without the extension) or ""."""
    path = changed.path.lower()
    if is_yaml(path):
        return ".yaml"
    found = next((s for s in (".py", ".txt", ".sh", ".go") if path.endswith(s)), "")
    if not found and changed.surface == "ci-script" and "." not in path.rsplit("/", 1)[-1]:
        return ".sh"
    return found


def _hits(view: SilencingView) -> Iterator[Hit]:
    suffix = _suffix(view.changed)
    yaml = suffix == ".yaml"
    block: Hit | None = None  # the open commented-out block's one finding
    alone: list[Hit] = []  # its commands that are findings of their own
    start = last = -1  # first and last line of the open commented-out block
    for line in view.changed.added_lines:
        n, text = line.new_no, line.text[:MAX_LINE]
        stripped = text.strip()
        if n is None or not stripped:
            continue  # blank lines neither open nor close a commented-out block
        if stripped[0] == "#":
            if last < 0 or not all(_blank(view.get(m)) for m in range(last + 1, n)):
                yield from _closed(view, block, alone, start, last, yaml)
                block, alone, start = None, [], n
            last = n
            if view.moved.get(stripped):
                view.moved[stripped] -= 1  # a comment moved, not a test newly disabled
                continue
            if alone and n <= alone[-1].end:
                continue  # a line of a commented-out suite entry already found
            commented = commented_hit(view, n, text, suffix)
            if commented is not None and commented.alone and block is None:
                alone.append(commented)  # one command, one test
            elif block is None:
                block = commented  # one finding per commented-out block, on its first hit
            continue
        yield from _closed(view, block, alone, start, last, yaml)
        block, alone, last = None, [], -1
        if view.moved.get(stripped):
            view.moved[stripped] -= 1  # moved or re-indented, not new
            continue
        hits = list(arg_hits(view, n, text))
        if suffix == ".py":
            hits += python_hits(view, n, text, stripped)
        elif suffix == ".go":
            hits += go_hits(view, n, text)
        elif yaml:
            hits += yaml_hits(view, n, text)
        for hit in hits:
            yield from _owned(view, hit, yaml)
    yield from _closed(view, block, alone, start, last, yaml)


def _blank(text: str | None) -> bool:
    return text is not None and not text.strip()


def _closed(view: SilencingView, block: Hit | None, alone: list[Hit], start: int,
            last: int, yaml: bool) -> Iterator[Hit]:
    """A closed commented-out block's findings, each spanning the whole block: a tracking
    link may sit on any of its lines, atop it or at its end."""
    for hit in [*alone, *([block] if block is not None else [])]:
        yield from _owned(view, dataclasses.replace(hit, first=start, end=max(hit.end, last)),
                          yaml)


_MOVE_RE = re.compile(r"\b(?:mov(?:e|es|ed|ing)|migrat\w*|relocat\w*)\b", re.I)
class SilencedTest(Rule):
    """A test or CI job made to stop failing instead of being fixed.

    Why it destabilizes CI
    ----------------------
    Every skip, rerun and soft-fail turns a red signal off without fixing anything, and
    nothing turns it back on: a Buildkite `soft_fail: true` step shows a warning instead
    of a failure, so nobody looks at it again; PyTorch files a `DISABLED test_…` issue for
    every disabled test precisely so it gets re-enabled; and in the SGLang Xeon fix a
    reviewer stopped a test change that would have hidden the real dependency of a
    failing test. Reruns are worse than skips: the test still runs, so a regression that
    fails one time in three merges green.

    Flags
    -----
    Added without an issue link on the line, the line above, or in the PR description:
    skip/xfail markers and `pytest.skip()`, tests or parametrizations commented out,
    entries added to skip lists (`skip*`, `*_skip*`, `exclude*`, `disabled*`, `--ignore=`,
    `--deselect`, `-k "not …"`, SGLang `register_*_ci(disabled=…)`), reruns (`--reruns`,
    `@pytest.mark.flaky`, `@flaky`, `@retry`), `continue-on-error: true`, `if: false`,
    and Buildkite `soft_fail` or automatic `retry`:

        - label: LM Eval PCP 4xB200
          soft_fail: true
          retry:
            automatic:
              - exit_status: -1
                limit: 1

    Silencing by deletion or comment too: a test command removed from a CI script or
    workflow (or a call of one of its test functions, a `- script:` matrix entry, a
    `TestFile(...)` suite entry, a line of a CI list file) that nothing else in the PR
    runs; a commented-out call in a CI test script (a link anywhere in its commented-out
    block, in the note where the function it calls is commented out, or in a note of the
    function it sits in saying why its tests are off — "Test cases are commented because
    of PR27772" at the function's end — tracks it); each
    `TestFile(...)` suite entry commented out, on one line or several, a finding of its own
    (also with its arguments edited, the script still run for others); a whole matrix entry
    (`- name: …`, `config_file_path:`) removed in a PR saying the test fails and is taken out
    ("did not pass … temporarily taken offline"); a job's `tests:` input re-pointed so that no
    changed CI file names the old test, which still exists (medium);
    `disabled=True` / `skip=True` on a Python test-list entry; a `def test_…` deleted in
    a PR that says it fixes tests (medium confidence). A test moved, renamed or deleted
    with its file is not silenced (nor is a `file.py::test_x` selection whose `def test_x`
    the PR deletes, nor an argument of a command re-wrapped over `\\` continuation lines
    that the removed command already had); nor is a test split into a helper that new tests call
    (`def test_x` → `def _test_x(self, levels)` plus `test_x_low…` / `test_x_high…`), a
    test method that the repository's explicit suite lists (`TestFile(...,
    test_methods=[...])`) never named, or a test taken off one job's list and moved, as
    the description says, into a new file under a directory another job runs whole. A
    skip list is a collection of test ids: `disabled_cache.insert(key)` on an object
    built disabled is not one. A command printed by `echo`/`printf` (on its line or
    continued from it) is not a test invocation. `continue-on-error` on a step that runs
    no test (a build, an upload, a review bot), environment flags that merely contain
    SKIP, and model-layer exclusion lists (`exclude_modules`) are not flagged.

    Re-enabling a test is never flagged, nor is a revert that names the change it undoes
    (`Revert "Add ci test for X"` with `Reverts org/repo#967` or `This reverts commit
    <sha>`): what it removes, that change added; the reverted PR is the reference. A
    skip or xfail on a test the PR adds — in a file it adds, a test function or class
    the base does not define, a new `pytest.param(..., marks=…)` case — silences
    nothing, whatever its reason: nothing that ran before stops running. A test moved
    in from a file the PR removes it from, or renamed in place, is not new; a skip added
    to an existing test's body fires even when its condition names only a value the PR
    adds to its parametrization (the condition is not evaluated); reruns on a new test
    still fire (its flakiness stays hidden). Likewise a soft-fail (`continue-on-error`,
    `soft_fail`) on a job or step the PR adds, or in a workflow it adds, whatever its
    reason ("continue even if some tests fail, we want the timing data"); one added to an
    existing job fires. A skip on an existing test whose `def` line the PR rewrites, a
    new test-list entry, or `if: false` on a new step is flagged only when its reason
    says it fails and not that it is optional on purpose (`# non-blocking`: advisory).

    Capability gates (`skipif(not torch.cuda.is_available())`, `skip_if_rocm("not
    supported")`, a repository's own `@require_fp16` / `@requires_deepspeed` /
    `skip_unless_…` helper naming a dtype, library or feature) keep the test running
    wherever it can, and are not flagged unless their reason says the test fails, or the
    PR's title or short description says it skips failing tests, or a sentence of a
    long description or one subject of a squash message (each its own commit, however
    few) does so naming the test or the gate's platform. A gate off a
    backend the PR itself adds (title "XPU support", a new `def is_xpu_available`),
    `@require_non_xpu`, silences nothing (the test never ran there): not flagged, or
    medium when its reason says it fails there. A gate off a platform CI already ran
    (`@skip_if_rocm  # flaky on MI300`) stays a silencing.

    A removed test command still runs when the head runs it through a matrix
    (`make ${{ matrix.target }}`, `for t in ${{ matrix.targets }}; do make $t; done`,
    `include:` entries too), a shell loop over literal words, or a make target whose
    recipe calls it (`test:` → `$(MAKE) test_core`). A removal the description accounts
    for — a sentence that names it, says it is taken out and why it is not needed
    (duplicate of, moved to, covered by, orphaned) and not that it fails — is not
    flagged. Removals anchored at one head line (steps deleted together, jobs folded
    into one) are one finding that lists every removed command.

    Prefer
    ------
    Fix the failure; if the test must be silenced meanwhile, link the issue that tracks
    turning it back on:

        @pytest.mark.skip(reason="OOM on B200, see #51071")
        def test_glm_pcp4_gsm8k(): ...

    A link, `#N`, a tracker key (`SW-241408`) or a PR or issue named by its number
    (`PR's: 30627, 31036`, `PR30684`, `PR-1311`, `issue 4521`, or the number first:
    "waiting for 1311pr to merge") tracks it; a count or a version after such a word ("PR
    2 of the series", "issues: 12 tests fail"), a plural ("120 PRs") or a number alone (a
    year, a size, a port) does not.
    """

    id = "silenced-test"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, Any]] = {
        "surfaces": ("test", "cpu-test", "workflow", "ci-config", "ci-script", "eval-config"),
    }

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if reverts(ctx.snapshot.title, ctx.snapshot.body):
            return
        links = DescriptionLinks.of(ctx.snapshot.body)
        pr_text = f"{ctx.snapshot.title}\n{ctx.snapshot.body}"
        failing = says_failing(ctx.snapshot.title, ctx.snapshot.body, SILENCE_REASON_RE)
        moved: Counter[str] | None = None
        removed_defs: frozenset[str] = frozenset()
        surfaces = ctx.option("surfaces")
        # Go tests live beside the code they test, outside the test directories.
        go_tests = [f for f in ctx.snapshot.files if f.path.endswith("_test.go") and
                    f.surface not in surfaces and f.status != "removed" and not f.binary]
        adds: PullRequestAdds | None = None
        backends: frozenset[str] | None = None  # platforms the PR adds, found on need
        fix_pr = fixes_tests(ctx.snapshot.title)
        taken_out = says_taken_out(ctx.snapshot.title, ctx.snapshot.body, SILENCE_REASON_RE)
        for changed in [*ctx.files(*surfaces), *go_tests]:
            known = _known_text(changed)
            lowered = known.lower()
            hinted = "#" in changed.added_text or has_any_hint(lowered)
            removes = bool(changed.removed_lines) and may_remove_tests(
                changed, _suffix(changed), fix_pr)
            entries = bool(taken_out and changed.removed_lines) and _suffix(changed) == ".yaml"
            if not hinted and not removes and not entries:
                continue
            if moved is None and hinted:  # built on need: most PRs have no file with a hint
                moved = Counter(ln.text.strip() for f in ctx.snapshot.files
                                for ln in f.removed_lines)
                removed_defs = defined_names(moved)  # tests the PR moves or rewrites
            if backends is None and hinted:
                backends = new_backends(ctx.snapshot.title, ctx.snapshot.files)
            view = SilencingView(changed, known, lowered, moved or Counter(), failing,
                                 backends or frozenset(), ctx.snapshot.repo_view, removed_defs)
            hits: list[Hit] = list(_hits(view)) if hinted else []
            if removes:
                adds = adds or PullRequestAdds(ctx.snapshot.files, ctx.snapshot.repo_view,
                                               _MOVE_RE.search(pr_text) is not None)
                list_file = () if changed.surface != "eval-config" else (changed.path,)
                hits += removal_hits(view, _suffix(changed), adds, fix_pr, list_file)
            if entries:
                adds = adds or PullRequestAdds(ctx.snapshot.files, ctx.snapshot.repo_view,
                                               _MOVE_RE.search(pr_text) is not None)
                found = list(matrix_entry_hits(view, adds, taken_out))
                at = {h.line for h in found}  # a whole entry, over a medium read of one key
                hits = [h for h in hits if not (h.medium and h.line in at)]
                taken = {hit.line for hit in hits}
                hits += [h for h in found if h.line not in taken]
            kept = [hit for hit in hits if not accounted(view, hit, links, pr_text)]
            for hit in one_per_line(kept):
                yield self.finding(
                    f"{hit.what} {hit.verb}{hit.where} without an issue link, {hit.why}. Link "
                    "the tracking issue on this line, the line above, or in the PR description.",
                    file=changed, line=hit.line,
                    key=f"{hit.what}{hit.where}|{(view.get(hit.line) or '').strip()}",
                    confidence=Confidence.MEDIUM if hit.medium else Confidence.HIGH,
                )
