"""silenced-test: a test or job made to stop failing instead of being fixed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile
from rules.analysis.lines import MAX_LINE, known_lines
from rules.analysis.prtext import DescriptionLinks, issue_link
from rules.analysis.yamlscan import is_yaml
from rules.base import Rule, RuleContext
from rules.silenced_test.line_structure import ANY_HINT, SilencingView
from rules.silenced_test.silencing_detectors import (
    SILENCE_REASON_RE,
    Hit,
    arg_hits,
    commented_hit,
    python_hits,
    yaml_hits,
)


def _known_text(changed: ChangedFile) -> str:
    """The head-side lines we know (full text or patch), one per line."""
    return "\n".join(known_lines(changed).values())


def _hits(view: SilencingView) -> Iterator[Hit]:
    path = view.changed.path.lower()
    yaml = is_yaml(path)
    suffix = ".yaml" if yaml else next((s for s in (".py", ".txt") if path.endswith(s)), "")
    block_end = -1
    for line in view.changed.added_lines:
        n, text = line.new_no, line.text[:MAX_LINE]
        stripped = text.strip()
        if n is None or not stripped:
            continue
        if stripped[0] == "#":
            # One finding per commented-out block, on its first line.
            commented = commented_hit(view, n, text, suffix)
            hits = [commented] if commented and n != block_end + 1 else []
            block_end = n if commented or n == block_end + 1 else block_end
        elif view.moved.get(stripped):
            view.moved[stripped] -= 1  # moved or re-indented, not new
            continue
        else:
            hits = list(arg_hits(view, n, text))
            if suffix == ".py":
                hits += python_hits(view, n, text, stripped)
            elif yaml:
                hits += yaml_hits(view, n, text)
        if hits and yaml:
            hits = _owned(view, n, text, hits)
        yield from hits


def _owned(view: SilencingView, n: int, text: str, hits: list[Hit]) -> list[Hit]:
    """Name the step or job; a brand-new step that starts out optional silences nothing."""
    owner = view.owner(n)
    if owner is None:
        return hits
    if (owner[1] in view.added or view.changed.status == "added") and \
            not SILENCE_REASON_RE.search(text):
        return []
    preposition = "to" if hits[0].verb == "added" else "in"
    return [dataclasses.replace(h, subject=h.subject or owner[0],
                                where=h.where or f" {preposition} `{owner[0]}`") for h in hits]


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

    Re-enabling a test is never flagged. A skip on a brand-new test, or a new step that
    starts out soft-failing, is flagged only when its reason says it fails (a capability
    gate such as "requires CUDA" is fine).

    Prefer
    ------
    Fix the failure; if the test must be silenced meanwhile, link the issue that tracks
    turning it back on:

        @pytest.mark.skip(reason="OOM on B200, see #51071")
        def test_glm_pcp4_gsm8k(): ...
    """

    id = "silenced-test"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, Any]] = {
        "surfaces": ("test", "cpu-test", "workflow", "ci-config", "ci-script", "eval-config"),
    }

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        links = DescriptionLinks.of(ctx.snapshot.body)
        for changed in ctx.files(*ctx.option("surfaces")):
            known = _known_text(changed)
            lowered = known.lower()
            if "#" not in changed.added_text and not any(hint in lowered for hint in ANY_HINT):
                continue
            view = SilencingView(changed, known, lowered)
            for hit in _hits(view):
                if any(issue_link(view.get(m) or "") for m in range(
                        hit.line - 1, max(hit.end, hit.line) + 1)) or links.covers(hit.subject):
                    continue
                yield self.finding(
                    f"{hit.what} {hit.verb}{hit.where} without an issue link, {hit.why}. Link "
                    "the tracking issue on this line, the line above, or in the PR description.",
                    file=changed, line=hit.line,
                    key=f"{hit.what}{hit.where}|{(view.get(hit.line) or '').strip()}",
                )
