"""knob-rationale: a tuning knob changed with no reason next to it or in the description."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile, Hunk, PullRequestSnapshot
from rules.analysis.knobs import (
    Categories,
    Change,
    Description,
    KnobFilter,
    MovedSettings,
    configured_categories,
    follows_entry,
    hunk_changes,
    knob_filter,
    loosening,
    loosening_reported,
    new_configuration,
    new_unit_lines,
    scaffolding,
    shared_filter,
    split_across_owners,
    unwrapped,
)
from rules.analysis.lines import known_lines, printed
from rules.analysis.model_identity import for_another_model
from rules.analysis.prtext import reverted_change
from rules.base import Rule, RuleContext
from rules.knob_rationale.deviations import beside_baseline
from rules.knob_rationale.dictkeys import split_across_keys
from rules.knob_rationale.explained import explained
from rules.knob_rationale.fakes import fed_to_a_parser, on_a_fake
from rules.knob_rationale.followups import Followups
from rules.knob_rationale.introduced import introduced_names, known_before
from rules.knob_rationale.judging import KNOB_REASONS, new_platform_limit, stricter
from rules.knob_rationale.keypaths import split_across_entries
from rules.knob_rationale.mentions import Mentions
from rules.knob_rationale.notice import notice
from rules.knob_rationale.reenabled import commented_counterpart
from rules.knob_rationale.renamed import renamed_into_another_test
from rules.knob_rationale.repeats import fold_repeats
from rules.knob_rationale.restored import restored_by_removed_note
from rules.knob_rationale.sections import in_new_section
from rules.knob_rationale.sweeps import TEST_PATH_RE, mirrors, signature, sweep_key, swept
from rules.knob_rationale.switches import named_switch
from rules.knob_rationale.tuples import tuple_changes
from rules.knob_rationale.units import in_new_unit, split_across_functions


class KnobRationale(Rule):
    """A tuning knob changed or added with no stated reason.

    Why it destabilizes CI
    ----------------------
    Memory fractions, batch-token limits, concurrency, timeouts and accuracy gates are
    tuned against one failure on one machine. In vLLM #51015 the GLM-5.2 TP1/PCP4 eval
    started to OOM only because an earlier PR had raised `--max-num-batched-tokens` to
    32768; the SGLang Xeon fix raised `--mem-fraction-static` 0.2 → 0.3 because the
    KV-cache sizing reserved too little slack under concurrent model loads. Without the
    reason written down, the next person retunes the value back and the flake returns.
    A `#` inside a folded YAML scalar (`server_args: >-`) or a literal one that is passed
    on as arguments is part of the value, not a comment, so it does not count as an
    explanation (block-scalar-comment reports it); `#` lines in literal shell scripts
    (`run: |`, Buildkite `- |`) are real shell comments and do count.

    Flags
    -----
    A knob from the configured `knobs` list whose value changes (or which is added to an
    existing config or test) with no `#` comment within two lines and no sentence in the
    PR description giving a reason; one notice per hunk, listing its knobs:
    ```yaml
    server_args: >-
      --max-model-len 4096
      --max-num-batched-tokens 32768
    ```

    Poll, retry and start-up budgets are knobs too (`MAX_ATTEMPTS`, `--startup-wait`,
    `init_sleep_seconds`): a gate that gives up sooner fails at random.

    Knobs of a new file (or a test file renamed into another test, none of its tests kept),
    or of a new test, step, job, list item or config entry added whole (a new shell test
    function or top-level block, a new `"model": "…"` entry of a model table, a mapping
    added under a key that held nothing, a section of new module-level Python settings under
    a heading of its own: `# -- Options for linkcheck builder --`), are not asked about
    (that is new configuration, not a retune), nor are settings that only moved (the same
    value removed elsewhere in the PR) or that the PR uncomments as they were (a test block
    brought back; another value is asked about as old → new), values set on mocks and fakes
    (`SimpleNamespace(…)`, `MagicMock(…)`) in unit tests or in the data a unit test
    serializes for the parser it tests (`yaml.safe_dump({…})`), or shortened timeouts and a
    GitHub Actions `timeout-minutes` set where there was none (a limit that is too short
    fails loudly). Values are compared within one entry: a deleted test's threshold is not
    paired with the next test's, nor one benchmark case's value with another's (the same
    YAML key path, list items told apart by `name:`), nor a new test function's entry with
    an old function's entry of the same model; when cases are restructured, nothing is said
    rather than a wrong old → new. A knob added in a hunk that switches a setting to a value
    the description names (`model: hf` → `vllm` in "run lm-eval on vLLM") comes with that
    switch, whose account is its reason; a knob added to three or more sibling configs is
    one change, asked about once; a test fixture repeating the old → new retune of a default
    the PR changes in a non-test file follows that default. Knobs the PR's own code newly
    defines (a field, parameter or flag of the feature it adds) are configuration of that
    feature, not retunes; so are a parameter the PR adds to a signature, a variable or
    matrix key new to the file that only a branch, loop or step the PR adds reads (a new
    check's `accept_threshold`), and a value the knob already has on every unchanged line of
    its function (a new `elif` repeating it). Loosened gates, tolerances, timeouts and
    sample counts are left to `threshold-loosening`, which warns about them anyway, and so
    are gates the PR adds or resets far stricter (`accuracy_threshold` 0.38 → 0.88 for a
    changed eval; a nudge, 0.91 → 0.92, leaves less margin and is asked). A comment
    explaining one change also covers the same old → new change repeated in the same file
    (one decorator per test), and that retune repeated in several jobs or cases of one file
    is one notice with its count and lines (`(×7)`); a knob on an `echo` line that only
    prints the command for the log is not a setting. Commented-out code and pragmas are not
    reasons, nor is a comment that belongs to another key (the one directly above a
    different line) unless it names the knob or gives a reason, nor one that only restates
    the value (`# 2 attempts * 20 seconds = 40 seconds timeout`). The description may name a
    knob the way people write it: by abbreviation (`TP4`, `mem fraction`, `max len`) or in
    words (`maximum model length`) in a sentence giving a reason (the issue it resolves
    counts), or by the change itself in a bullet (`TP4 → TP2`, `max-model-len 8192 -> 4096`)
    when the PR states its reason or purpose elsewhere ("to speed up CI"). Hard-wrapped
    lines of a commit message are joined before sentences are read, a retune "to accommodate
    variance" (noise, fluctuation, instability) has a reason, and so has a value whose
    derivation is given ("each model's observed minimum minus 1.5 points", "plus 10%
    headroom"). A timeout may be named by the failure it produces: "fix … startup timeouts"
    explains a `wait_server_timeout` (a limit named by its phase: start-up, download,
    connect, compile, request).

    Nor is a knob that is only plumbed through a variable: a new override with an empty
    default (`${X:-}`, a `workflow_dispatch` input with `default: ''`) passed on only
    when set, a literal moved into a variable holding the same default, one variable
    swapped for another, or renamed with its value (`RETRY_DELAY_SECONDS` 30 →
    `RETRY_INTERVAL_SECONDS` 30); nor a step's env equal to the default of the script it
    runs (`${X:-30}`), or a first time limit handed to a script the step newly calls in
    place of code that had none; nor values of a script the PR rewrites whole (three
    quarters of its code replaced: a new mechanism's, not retunes). An old value that was
    only a variable is read as the default the file gives it, and unknown (a repository
    variable) is not asked about. Catalog
    entries (a model or case with its server arguments, in a benchmark/accuracy JSON or
    YAML, a workflow's inline table or a Python table keyed by model) are compared
    within the same entry, so reordered entries are not paired `TP8 → TP4`, and an
    entry renamed with another checkpoint (`model_path`) is new; in a PR whose
    subject is the recipe or the benchmark's model coverage (and that is not a CI fix)
    the catalog's serving configs are the content, not retunes. Arguments of a call the
    PR adds whole (a warm-up `run(num_prompts=1)`), defaults of variables that a file
    the PR adds reads (a new harness's timeouts), a parallelism flag renamed to an alias
    with the same value (`--tp-size 4` → `--tp 4`), and a parallelism flag set to the
    chip count of the runner or suite the PR moves the test to are not asked about
    either; nor is a `threshold` beside a `baseline` (the band a run may deviate: a
    gate), or a context length raised in a PR titled by long context (not a CI fix).
    A revert that names the change it undoes (`Reverts org/repo#780`, `This reverts
    commit <sha>`) restores what ran before that change, which is its reason; a title's
    speed purpose ("Speed up the accuracy test") explains a batch size, parallelism or
    concurrency raised and a sample count lowered, not other knobs; a value put back to
    what a FIXME the PR removes said it was before ("temporarily lowered from 0.38") is
    restored, that comment its account; so is a value set to what its case's own name says
    (batch 18 → 1 in `…-in64k-4-1`, where sibling cases' names spell their loads); a knob in
    one branch only of a conditional expression the PR adds (`… if prompts else
    {"batch_size": 16}`) configures a new path.

    Prefer
    ------
    Say why, next to the value (or in the description):
    ```yaml
    # 32K batches keep the large-batch PCP path covered; the TP1/PCP4 config
    # needs expandable segments for it (see #51015).
    server_args: >-
      --max-model-len 4096
      --max-num-batched-tokens 32768
    ```
    """

    id = "knob-rationale"
    severity = Severity.NOTICE

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if reverted_change(ctx.snapshot.title, ctx.snapshot.body) is not None:
            return  # a revert's values are what the reverted change replaced: it is the reason
        wanted = knob_filter(ctx.config.knobs)
        union = shared_filter(ctx.config)
        # Commit-message bodies are hard-wrapped: a knob and its reason may sit on two
        # lines of one sentence.
        description = Description(ctx.snapshot.text, unwrap=True, reasons=KNOB_REASONS)
        mentions = Mentions(unwrapped(ctx.snapshot.text[:200_000]))
        # What threshold-loosening reports is not asked about twice.
        categories = (configured_categories(ctx.config)
                      if loosening_reported(ctx.config) else None)
        moved = MovedSettings(ctx.snapshot, union)
        introduced = introduced_names(ctx.snapshot)
        followups = Followups(ctx.snapshot, union)
        asks: list[tuple[ChangedFile, list[Change]]] = []
        for changed in ctx.files():
            if changed.status in ("added", "copied") or renamed_into_another_test(
                    changed) or for_another_model(changed):
                continue  # a new config or test is reviewed as a whole, not as a retune
            asks += self._file(changed, wanted, union, (description, mentions), categories,
                               moved, ctx.snapshot, introduced, followups)
        sweeps, asked = swept(asks), set()
        mirrored = mirrors(ctx.snapshot, union) if asks else set()
        kept_asks: list[tuple[ChangedFile, list[Change]]] = []
        for changed, changes in asks:
            kept = []
            fixture = TEST_PATH_RE.search(changed.path) is not None
            for change in changes:
                key = sweep_key(changed, change)
                if fixture and change.old is not None and (
                        signature(change.setting, change) in mirrored):
                    continue  # mirrors the default this PR retunes (asked about there)
                if key not in asked:
                    kept.append(change)
                if key in sweeps:
                    asked.add(key)
            if kept:
                kept_asks.append((changed, kept))
        for changed, kept in fold_repeats(kept_asks):
            yield self._finding(changed, kept)

    def _file(
        self, changed: ChangedFile, wanted: KnobFilter, union: KnobFilter,
        texts: tuple[Description, Mentions], categories: Categories | None,
        moved: MovedSettings, snapshot: PullRequestSnapshot, introduced: frozenset[str],
        followups: Followups,
    ) -> list[tuple[ChangedFile, list[Change]]]:
        pr_text = snapshot.text
        description, mentions = texts
        per_hunk: list[tuple[Hunk, list[Change]]] = []
        head: Mapping[int, str] | None = None  # built once per file, only when asked
        for hunk in changed.hunks:
            fresh = new_unit_lines(hunk)
            switch: str | bool | None = False  # computed once per hunk, when needed
            kept: list[Change] = []
            found = split_across_owners(changed, hunk_changes(changed, hunk, union))
            found = split_across_keys(changed, hunk, split_across_entries(changed, hunk, found))
            found = split_across_functions(changed, found)
            for change in [*found, *tuple_changes(changed, hunk)]:
                new = change.new
                if new is None or not new.literal or not wanted(new.name) or not change.is_change:
                    continue
                reviewed = followups.review(changed, hunk, change)
                if reviewed is None:
                    continue  # plumbing, a catalog's subject, a new call's argument, …
                change = reviewed  # re-paired within its catalog entry, when it crossed one
                if change.old is None:
                    commented = commented_counterpart(changed, hunk, new, union)
                    if commented is not None:
                        # Code the PR uncomments: its old value is the commented-out one.
                        change = Change(commented, new)
                        if not change.is_change:
                            continue  # re-enabled as it was
                if change.old is None and (new.line in fresh or in_new_unit(changed, new)
                                           or new_configuration(changed, new, moved)
                                           or in_new_section(snapshot, changed, new)):
                    continue  # a knob of a brand-new entry, or one that moved, is no retune
                if change.old is None and categories is not None and categories.kind(
                        new.name) in ("gate", "ceiling"):
                    continue  # a gate added tightens: threshold-loosening's to judge
                if change.old is None and new.name in introduced and not known_before(
                        snapshot, changed.path, new):
                    continue  # a setting of the feature this PR defines: configuration
                if change.old is None:
                    switch = named_switch(hunk, pr_text) if switch is False else switch
                    if switch:
                        continue  # comes with the switch the description explains
                head = known_lines(changed) if head is None else head
                if printed(head, new.line):
                    continue  # an `echo` of the command: the log's copy, not what runs
                if categories is not None and beside_baseline(head, new):
                    continue  # the band allowed around a baseline: threshold-loosening's
                if scaffolding(changed, new) or on_a_fake(changed, new) or fed_to_a_parser(
                        changed, new):
                    continue  # a mock's value, or a parser's input, is the unit test's setup
                if categories is not None and loosening(change, categories, True):
                    continue  # threshold-loosening warns about it, with the same question
                if stricter(change, categories) or new_platform_limit(changed.path, change):
                    continue  # a shorter limit, a stricter gate, a first limit: fail loudly
                if restored_by_removed_note(hunk, change) or follows_entry(changed, change):
                    continue  # as the removed FIXME, the case's name or new dataset says
                kept.append(change)
            if kept:
                per_hunk.append((hunk, kept))
        if not per_hunk:
            return []
        done = explained(changed, (c for _, changes in per_hunk for c in changes),
                         (description, mentions), snapshot.title, categories)
        asks: list[tuple[ChangedFile, list[Change]]] = []
        for _, changes in per_hunk:
            missing = sorted(
                (c for c in changes if signature(c.setting, c) not in done),
                key=lambda c: c.setting.line,
            )
            if missing:
                asks.append((changed, missing))
        return asks

    def _finding(self, changed: ChangedFile, changes: list[Change]) -> Finding:
        found = notice(changed, changes)
        return self.finding(found.message, file=changed, line=found.line,
                            end_line=found.end_line, key=found.key, details=found.details)
