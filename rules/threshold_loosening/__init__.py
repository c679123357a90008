"""threshold-loosening: a gate, tolerance, timeout or sample count made easier to pass."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from bot.core.findings import Confidence, Finding, Severity
from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import (
    CATEGORY_OPTIONS,
    Description,
    configured_categories,
    fixes_limit_failure,
    follows_entry,
    holds_yaml_keys,
    hunk_changes,
    loosening,
    new_unit_lines,
    normalize,
    number,
    shared_filter,
)
from rules.analysis.model_identity import for_another_model
from rules.analysis.prtext import failure_evidence
from rules.analysis.pycode import bare_assignment
from rules.base import Rule, RuleContext
from rules.threshold_loosening.branches import widened_branches
from rules.threshold_loosening.comparisons import rewritten_checks
from rules.threshold_loosening.defaults import CodeKnowledge
from rules.threshold_loosening.entries import AddedWords, describe, removed_entries
from rules.threshold_loosening.env_defaults import env_default_loosenings
from rules.threshold_loosening.gates import dropped_asserts, gate_loosenings
from rules.threshold_loosening.hunk_lines import (
    assigned,
    line_text,
    retry_limit,
    tolerance_on_existing_check,
)
from rules.threshold_loosening.items import same_item, same_job
from rules.threshold_loosening.margins import lowered_baselines, margin_change
from rules.threshold_loosening.messages import NOUNS, Loose, cut, describe_loosening, repeat_key
from rules.threshold_loosening.odd_values import odd_value
from rules.threshold_loosening.reasons import description_reason, reason_comment
from rules.threshold_loosening.recorded import recorded_cuts
from rules.threshold_loosening.removed import AddedLines, dropped, key_of, over_default
from rules.threshold_loosening.slack import added_slack, dropped_test_asserts
from rules.threshold_loosening.tolerance_names import judge

_MAX_ENTRY_FILES = 200  # files read for removed eval entries per review
_LIMITS = frozenset({"timeout", "ceiling"})  # raised: the old value may be said outgrown


class ThresholdLoosening(Rule):
    """An accuracy gate, tolerance, timeout or sample count loosened.

    Why it destabilizes CI
    ----------------------
    Loosening is the cheapest way to turn a red job green, and it is sometimes right
    (a 20-minute server-start timeout that only hid an OOM, as in vLLM #51015, was not
    the thing to raise). Each loosening hides something: a lower `accuracy_threshold`
    lets a real accuracy regression merge, a larger `rtol`/`atol` hides numerical drift,
    a longer `timeout-minutes` lets hangs hold runners longer, and fewer
    `num_questions` make the score noisier so the gate flakes more and catches less.
    So every loosening is flagged, however well argued; the finding quotes the reason
    when the description or a prose comment next to the change gives one (commented-out
    code is no reason, nor a title that only restates the change, "increase the timeout
    from 120 to 180 minutes"; an eval entry's run time stated in the description is, and
    so is a raised limit's old value said to be exceeded). A loosening with a reason and
    the failing run shown (a run link, a log) did what Prefer asks: it is reported with
    medium confidence, a note in the summary rather than an inline comment. Fewer
    few-shot examples (`num_fewshot`) are not treated as loosening: they make the task
    harder, not the gate easier. A timeout whose name says what it bounds
    (`wait_server_timeout`, `download_timeout`) raised in a PR whose description says it
    fixes timeouts of that phase ("fix … startup timeouts") is the fix it names, and not
    reported; a bare job limit (`timeout-minutes`) raised "to fix CI timeouts" still is.

    Flags
    -----
    A gate or floor lowered (`*threshold`, `min_throughput`, expected scores, lm-eval
    `metrics: value`, `assert acc > 0.8` / `assertGreater(acc, 0.8)`, perf floors such as
    `min_speedup`, `min_tokens_per_sec`; not a shape's `min_tokens`), a ceiling raised,
    a tolerance raised or added to an existing check, a timeout or max-wait raised, a
    sample count cut:
    ```yaml
    accuracy_threshold: 0.85   # was 0.90
    num_questions: 200         # was 1319
    ```

    Also: gates named by what they bound (`baseline_*`, `minimum_accuracy`, ceilings such as
    `max_abs_error` where raising loosens), a `threshold` that is an allowed margin around
    its sibling `baseline` (`baseline: 95`, `threshold: 5 → 10`: at most half the baseline,
    and not a fraction beside a baseline of 1 or more, which is a ratio) or its `baseline`
    lowered under it, settings inside JSON strings and env vars, fewer `repeats`, a gate
    deleted (a key, an `assert acc >= 0.6`), a gate added to an existing entry below the
    code's default, a two-sided `abs(x - ref) < tol` made one-sided, a `round()` added
    before a comparison, a value no longer a number (medium), eval entries removed (what
    stops running: a step, not a stage header merged away; a case's gate set it no longer
    merges in, `benchmarks:` / `<<: *benchmarks_perf1`).

    Tolerances moved into names (`allclose(out, ref, 1e-4, 1e-5)` → `assert_close(out, ref,
    atol=ATOL, rtol=RTOL)`, `ATOL` set at module level) are compared with the literals of
    the calls they replaced, kind by kind. A condition that selects the looser of two values
    widened (`if is_hpu_available():` → `if is_hpu_available() or is_xpu_available():`, `==
    "xpu"` → `in ("xpu", "hpu")`) is a loosening for what it newly admits. Slack added to a
    measured bound (`assert mem <= before` → `<= before + 5`, `* 1.1`), and a whole
    assertion deleted from a test that stays (medium) are flagged too, and so is a count set
    below the old value its own comment records (`# Original repeats: AIME=32`, `AIME_N=4`).

    Tightening (a higher gate, a lower tolerance, a new or shorter timeout) is never
    flagged, nor are values that can't be compared (expressions), values of different list
    entries (`- model: a` and `- model: b`) or of a config moved to another model
    (`llama-8b.yaml` → `llama-70b.yaml`), gates of brand-new entries, a dropped override
    whose code default is as strict, or keys the code documents as warnings-only. A
    tolerance name equal to or tighter than the literals it replaced, or looser only in a
    branch for a device the PR adds (a check the base never names), is not a loosening; nor
    is an assertion rewritten, moved to another line of the PR, or deleted together with the
    code it checked, nor a commented-out one enabled with another bound (a gate added, not
    retuned), nor a value its case's own name sets (`…-in64k-4-1`: 4 prompts, as sibling
    cases' names spell their loads) or its new dataset (a workload switch).

    Prefer
    ------
    Fix the cause and keep the gate; when loosening is the right call, say why next to
    the value and link the failing run:
    ```yaml
    # GSM8K on 1319 questions is 0.88±0.01 on B200 since #49294 (run 81913);
    # restore 0.90 once the FlashInfer workspace fix lands.
    accuracy_threshold: 0.87
    ```
    """

    id = "threshold-loosening"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, Any]] = CATEGORY_OPTIONS

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        categories = configured_categories(ctx.config)
        wanted = categories.wanted()
        union = shared_filter(ctx.config)
        description = Description(ctx.snapshot.text)
        words = AddedWords(ctx.snapshot.files)
        code = CodeKnowledge(ctx.snapshot)
        added = AddedLines(ctx.snapshot.files)  # the PR's added lines (moved settings)
        entry_budget = _MAX_ENTRY_FILES
        evidence: bool | None = None  # the description shows the failing run (on need)
        for changed in ctx.files():
            if changed.status in ("added", "copied") or for_another_model(changed):
                continue  # a new config: its values are not a retune of old ones
            found: list[Loose] = []
            # Bounded: each file's check searches the PR's added text.
            if changed.removed_lines and entry_budget > 0:
                entry_budget -= 1
                for gone in removed_entries(changed, words):
                    found.append(Loose("entries", gone.where, describe(gone), "",
                                        gone.line, (gone.line,), gone.where,
                                        subjects=gone.items))
            for hunk in changed.hunks:
                fresh = new_unit_lines(hunk)
                removed: list[str] | None = None
                for change in hunk_changes(changed, hunk, union):
                    new = change.new
                    if new is None or not wanted(new.name):
                        continue
                    if removed is None:
                        removed = [line.text for line in hunk.removed]
                    text = line_text(hunk, new.line)
                    if new.name == "limit" and retry_limit(hunk, new.line):
                        continue  # Buildkite `retry: automatic: limit:` is not a sample count
                    allow = new.line not in fresh and tolerance_on_existing_check(
                        changed, removed, text)
                    named = bare_assignment(text)
                    if named is not None and categories.kind(new.name) == "tolerance" and (
                            change.old is None or not assigned(hunk, change.old.line)):
                        # A name set once for calls that passed literals (`atol=1e-5`).
                        moved = judge(changed, named[1], named[2], new.line, description.text)
                        if moved is not None and moved.looser:
                            found.append(Loose(
                                "tolerance", named[1], moved.old, named[2], new.line,
                                new.lines, new.name, f" where the `{moved.call}` calls it "
                                f"replaces passed {moved.which} {moved.old}"))
                        continue  # else a new check's tolerance, or no looser than before
                    margin = None
                    if change.old is not None and categories.kind(new.name) == "gate":
                        margin = margin_change(changed, change.old, new)
                    around = margin[0] if margin is not None and margin[0] else None
                    if margin is not None:  # wider is looser: a margin, not a floor
                        kind = "margin" if margin[1] else None
                    else:
                        kind = loosening(change, categories, allow) or odd_value(
                            change, categories)
                    if change.old is None and number(new.value) == 0:
                        kind = None  # `atol=0.0` added: an exact match, the strictest check
                    note = f" around `{around}`" if around is not None else ""
                    if kind is None and change.old is None and new.line not in fresh:
                        default = over_default(changed, hunk, new, categories.kind(new.name)
                                               or "", code)
                        if default is not None:
                            kind = categories.kind(new.name)
                            note = f" where the code's default {default} applied before"
                    if kind is None or (change.old is not None and not (
                            same_item(hunk, change.old, new)
                            and same_job(changed, change.old, new))):
                        continue  # values of two list items or jobs are not old → new
                    if follows_entry(changed, change):
                        continue  # as the case's own name or its new dataset sets it
                    if kind in ("gate", "ceiling") and code.warnings_only(
                            changed.path, "metrics" if new.name == "metric-value"
                            else key_of(new)):
                        continue  # the repo's code says these values only warn
                    old = change.old.shown if change.old is not None else ""
                    found.append(Loose(kind, new.raw, old, new.shown, new.line, new.lines,
                                        new.name, note, kind == "malformed"))
                for drop in dropped(changed, hunk, categories, wanted, code, added):
                    note = (f"; the code's default {drop.default} applies instead"
                            if drop.default is not None else "")
                    found.append(Loose("dropped", drop.setting.raw, drop.setting.shown, "",
                                        drop.line, (drop.line,), drop.setting.name, note,
                                        drop.default is None, NOUNS[drop.kind]))
                bounds: set[str] = set()  # dropped bound gates, said once
                for gate, at in dropped_asserts(hunk):
                    text = next((ln.text.strip() for ln in hunk.removed
                                 if ln.old_no == gate.line), gate.subject)
                    bounds.add(text)
                    found.append(Loose("dropped", text, gate.text, "", at, (at,),
                                        gate.subject))
                for text, test, at in dropped_test_asserts(changed, hunk, added):
                    if text not in bounds:
                        found.append(Loose("assertion", text, text, "", at, (at,), test,
                                            medium=True))
                for rec in recorded_cuts(hunk):
                    found.append(Loose("recorded", rec.name, rec.old, rec.new, rec.line,
                                        (rec.line,), rec.name, rec.comment))
                for slack in added_slack(hunk):
                    found.append(Loose("slack", slack.new, slack.old, slack.new, slack.line,
                                        (slack.line,), "slack", slack.slack))
                for env in env_default_loosenings(hunk, categories):
                    found.append(Loose(env.kind, env.name, env.old, env.new, env.line,
                                        (env.line,), normalize(env.name)))
                for check in rewritten_checks(hunk):
                    found.append(Loose(check.kind, check.new, check.old, check.new,
                                        check.line, (check.line,), check.kind))
                for wide in widened_branches(changed, hunk, categories):
                    found.append(Loose("widened", wide.setting, wide.old, wide.new, wide.line,
                                        (wide.line,), wide.kind, f" (otherwise {wide.other})"))
                for old_gate, gate in gate_loosenings(changed, hunk):
                    found.append(Loose("gate" if gate.lower else "ceiling",
                                        f"assert on {gate.subject}", old_gate.text, gate.text,
                                        gate.line, (gate.line,), gate.subject))
                found.extend(lowered_baselines(changed, hunk))
            if found:
                if evidence is None:
                    evidence = failure_evidence(description.text) is not None
                yield from self._report(description, changed, found, evidence)

    def _report(
        self, description: Description, changed: ChangedFile, found: list[Loose],
        evidence: bool,
    ) -> Iterator[Finding]:
        # The same loosening repeated in one code file (one call site per test helper) is
        # one edit: reported once, at its first line, naming the others. In a config each
        # entry (a workflow step, say) owns its setting and gets its own finding.
        code = not holds_yaml_keys(changed.path)
        repeats: dict[tuple[str, ...], list[int]] = {}
        for item in found:
            repeats.setdefault(repeat_key(item, code), []).append(item.line)
        for item in found:
            lines = repeats[repeat_key(item, code)]
            if item.line != lines[0] or (item.kind == "timeout" and item.old and (
                    fixes_limit_failure(description.text, item.name) is not None)):
                continue  # a repeat, or a limit raised by a PR fixing what it times out
            kind, raw, old, new = item.kind, item.raw, item.old, item.new
            what, why = describe_loosening(item)
            # The comment recording the old values is no reason.
            comment = None if kind == "recorded" else reason_comment(changed, item.lines)
            said = description_reason(
                description, [item.name, raw, new] if new else [item.name, raw], item.subjects,
                old if kind in _LIMITS else "")
            if comment is not None:
                reason = f" Reason given next to it: “{cut(comment[1])}”."
            elif said is not None:
                reason = f" Reason given in the description: “{cut(said)}”."
            else:
                reason = " No reason is given next to it or in the PR description."
            # A reason and the failing run shown: the PR did what the rule asks, so the
            # finding is a note for the summary, not an inline comment.
            argued = (comment is not None or said is not None) and evidence
            also = ""
            if len(lines) > 1:
                also = f" The same change is on line{'s' if len(lines) > 2 else ''} " + \
                    ", ".join(str(n) for n in lines[1:]) + "."
            yield self.finding(
                f"{what}: {why}.{reason}{also}",
                file=changed,
                line=item.line,
                key=f"{kind}|{raw}|{old}|{new}",
                details=((raw, f"{old or '(none)'} → {new or '(removed)'}"),),
                confidence=Confidence.MEDIUM if item.medium or argued else Confidence.HIGH,
            )

