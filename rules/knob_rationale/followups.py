"""Changes that set a knob without retuning it, read once per PR.

Each reading has its module: optional-override plumbing (`plumbing`), catalog entries
compared entry by entry and catalogs that are the PR's subject (`catalogs`), context
lengths of a long-context PR (`context`), variables of a harness the PR adds
(`newfeature`), arguments of a call added whole (`newcalls`), parameters, variables
and repeated values of new code (`newcode`), parallelism aliases and runner-size
follow-ups (`aliases`), knobs renamed and scripts rewritten whole (`rewrites`), and
values a workflow step hands to the script it runs (`handover`).
"""

from __future__ import annotations

from bot.core.snapshot import ChangedFile, Hunk, PullRequestSnapshot
from rules.analysis.knobs import Change, KnobFilter
from rules.knob_rationale.aliases import placements, renamed_alias, topology_follow_up
from rules.knob_rationale.branches import in_new_branch
from rules.knob_rationale.catalogs import in_catalog, recipe_update, repaired
from rules.knob_rationale.context import context_subject, raises_context
from rules.knob_rationale.handover import handed_to_script
from rules.knob_rationale.newcalls import new_call_lines
from rules.knob_rationale.newcode import new_parameter, read_by_new_code, repeats_siblings
from rules.knob_rationale.newfeature import feeds_new_harness, new_file_reads
from rules.knob_rationale.plumbing import forwarded_only, with_known_old
from rules.knob_rationale.rewrites import renamed_knob, rewritten


class Followups:
    """What the PR as a whole tells about its knob changes (computed once)."""

    def __init__(self, snapshot: PullRequestSnapshot, wanted: KnobFilter) -> None:
        self._snapshot = snapshot
        self._wanted = wanted  # the knob rules' shared filter (renamed knobs' old names)
        self._recipe: bool | None = None
        self._reads: frozenset[str] | None = None
        self._placed: dict[str, set[int]] | None = None
        self._context: bool | None = None

    @property
    def recipe(self) -> bool:
        if self._recipe is None:
            self._recipe = recipe_update(self._snapshot)
        return self._recipe

    @property
    def context(self) -> bool:
        if self._context is None:
            self._context = context_subject(self._snapshot)
        return self._context

    @property
    def reads(self) -> frozenset[str]:
        if self._reads is None:
            self._reads = new_file_reads(self._snapshot)
        return self._reads

    @property
    def placed(self) -> dict[str, set[int]]:
        if self._placed is None:
            self._placed = placements(self._snapshot)
        return self._placed

    def review(self, changed: ChangedFile, hunk: Hunk, change: Change) -> Change | None:
        """The change as a retune to ask about (re-paired within its catalog entry),
        or None when it is no retune."""
        if forwarded_only(changed, change):
            return None  # plumbing: a default run uses no new value
        if rewritten(changed):
            return None  # a new implementation: its values are not the old code's retuned
        known = with_known_old(changed, change)
        if known is None:
            return None  # the old value was a variable whose value is not in this diff
        found = repaired(changed, known)
        if found is None or not found.is_change:
            return None  # the entry kept its value, or the entry is new
        new = found.new
        assert new is not None
        if self.recipe and in_catalog(changed, new.line):
            return None  # the catalog's serving configs are what the PR updates
        if raises_context(found) and self.context:
            return None  # the context length the PR's long-context feature runs with
        if found.old is None:
            if new.line in _new_calls(hunk):
                return None  # an argument of a call the PR adds whole
            if feeds_new_harness(changed, new, self.reads):
                return None  # configuration of the harness the PR adds
            if new_parameter(changed, new):
                return None  # the default of a parameter the PR adds
            if read_by_new_code(changed, new) or repeats_siblings(changed, new):
                return None  # the new code's own value, or the value its siblings have
            if in_new_branch(changed, new):
                return None  # configures a code path the PR's conditional adds
            if renamed_alias(changed, hunk, found) or topology_follow_up(
                    changed, found, self.placed):
                return None  # same value under another name, or the new runner's size
            if renamed_knob(changed, hunk, found, self._wanted):
                return None  # a variable renamed, its value kept
            if handed_to_script(self._snapshot, changed, found):
                return None  # the script's own default, or a first limit for its call
        return found


def _new_calls(hunk: Hunk) -> frozenset[int]:
    """`new_call_lines`, kept on the hunk: several knobs of one hunk ask."""
    found = hunk.derived.get("knob-rationale.new-calls")
    if not isinstance(found, frozenset):
        found = hunk.derived["knob-rationale.new-calls"] = new_call_lines(hunk)
    return found
