"""The review's shortcuts give the answers of the full reading they skip.

For random files: the widened-branch, slack and recorded-cut prefilters only skip files
and hunks where no line could be read; `only_adds_skips` returns what reading every
file's verdict did; knob-rationale's one-run test, which stops at each side's last
paired line, answers as the walk over the whole hunk did (the reference below).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.intent import changes as intent_changes
from rules.analysis.knobs import Change, hunk_changes, shared_filter
from rules.analysis.pycode import branch_condition
from rules.knob_rationale import keypaths
from rules.threshold_loosening import branches, slack
from tests.conftest import make_snapshot

LINE = st.one_of(st.sampled_from([
    "if is_hpu():", "    ATOL = 1e-4", "elif x == 'a':", "else:", "  if  x in (a, b):",
    "assert mem <= base", "    assert mem <= base + 5", "self.assertEqual(a, b)",
    "# Original repeats: AIME=32", "AIME_N = 4", "@pytest.mark.skip(reason='x')",
    "# x = 1", "x = 1", "  - name: a", "    timeout: 10", "  - name: b", "    timeout: 20",
    "cases:", "  acc:", "    threshold: 0.9", "  perf_1:", "    threshold: 5", "  - model: m",
    "    num_shards: 4", "", "  ",
]), st.text(alphabet="abif :#=()[]'\"-.\t\r", max_size=24))
LINES = st.lists(LINE, max_size=16)
PATHS = st.sampled_from(["tests/test_x.py", "tests/evals/gsm8k/configs/m.yaml",
                         ".github/workflows/ci.yml", "ci/run.sh", "src/model.py"])


def _changed(path: str, base: list[str], head: list[str], patch_only: bool) -> ChangedFile:
    snapshot = make_snapshot([{"path": path, "base": "\n".join(base), "head": "\n".join(head)}],
                             patch_only=patch_only)
    return classify_snapshot(snapshot, Config()).files[0]


def _all_verdicts(files: Sequence[ChangedFile]) -> bool:
    """`only_adds_skips` as it was: every file's verdict read, then judged."""
    verdicts = []
    for changed in files:
        if changed.status not in ("modified", "changed") or changed.patch_missing:
            return False
        verdicts.append(intent_changes._skip_only_file(changed))
    return any(v is True for v in verdicts) and all(v is not False for v in verdicts)


def _within_one_run_whole(hunk: Hunk, changes: Sequence[Change]) -> bool:
    """knob-rationale's one-run test as it was: the walk over every line of the hunk."""
    run = 0
    openers: list[tuple[bool, int, int]] = []
    olds: dict[int, tuple[int, int, int]] = {}
    news: dict[int, tuple[int, int, int]] = {}
    for k, line in enumerate(hunk.lines):
        if line.old_no is not None and line.new_no is not None:
            run += 1
            continue
        text = line.text
        stripped = text.strip()
        indent = len(text) - len(text.lstrip())
        if stripped.startswith("-") or stripped.endswith(":") or keypaths._renames(stripped):
            openers.append((line.old_no is not None, k, indent))
        if line.old_no is not None:
            olds[line.old_no] = (run, indent, k)
        elif line.new_no is not None:
            news[line.new_no] = (run, indent, k)
    for change in changes:
        if change.old is None or change.new is None:
            continue
        old, new = olds.get(change.old.line), news.get(change.new.line)
        if old is None or new is None or old[:2] != new[:2]:
            return False
        if any(depth <= old[1] and k < (old[2] if base else new[2])
               for base, k, depth in openers):
            return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(PATHS, LINES, LINES), min_size=1, max_size=3), st.booleans())
def test_shortcuts_answer_as_the_full_reading(
    specs: list[tuple[str, list[str], list[str]]], patch_only: bool
) -> None:
    files = [_changed(path, base, head, patch_only) for path, base, head in specs]
    assert intent_changes.only_adds_skips(files) == _all_verdicts(files)
    knobs = shared_filter(Config())
    for changed in files:
        if not branches._may_widen(changed):
            assert all(branch_condition(line.text) is None for line in changed.added_lines)
        for hunk in changed.hunks:
            added = "\n".join(line.text for line in hunk.added)
            if "assert" not in added or slack._ADDED_ASSERT_RE.search("\n" + added) is None:
                assert all(slack._comparison(line.text) is None for line in hunk.added)
            # recorded_cuts reads the lines with a head number and no base number: the
            # hunk's added lines, whose text its `#` prefilter searches.
            assert [ln for ln in hunk.lines if ln.new_no is not None and ln.old_no is None] \
                == list(hunk.added)
            found = hunk_changes(changed, hunk, knobs)
            assert keypaths._within_one_run(hunk, found) == _within_one_run_whole(hunk, found)


ENTRY = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["timeout", "threshold",
                                                                    "num_shards", "rtol"]),
                  st.integers(1, 9), st.integers(1, 9), st.booleans(), st.booleans())


def _entries(entries: list[tuple[str, str, int, int, bool, bool]], head: bool) -> list[str]:
    lines = ["cases:"]
    for name, key, old, new, renamed, nested in entries:
        lines.append(f"  - name: {name}{'_x' if head and renamed else ''}")
        lines += ["    opts:", f"      {key}: {new if head else old}"] if nested else [
            f"    {key}: {new if head else old}"]
    return lines


@settings(max_examples=300, deadline=None)
@given(st.lists(ENTRY, min_size=1, max_size=6), st.booleans())
def test_the_one_run_test_on_retuned_entries(
    entries: list[tuple[str, str, int, int, bool, bool]], patch_only: bool
) -> None:
    changed = _changed("tests/evals/gsm8k/configs/m.yaml", _entries(entries, False),
                       _entries(entries, True), patch_only)
    knobs = shared_filter(Config())
    for hunk in changed.hunks:
        found = hunk_changes(changed, hunk, knobs)
        assert keypaths._within_one_run(hunk, found) == _within_one_run_whole(hunk, found)


def test_the_one_run_test_sees_pairs() -> None:
    # Guards the last test: knob pairs do come out of these lines.
    changed = _changed("tests/evals/gsm8k/configs/m.yaml",
                       ["cases:", "  - name: acc", "    threshold: 0.9"],
                       ["cases:", "  - name: acc_x", "    threshold: 0.8"], False)
    hunk = changed.hunks[0]
    found = hunk_changes(changed, hunk, shared_filter(Config()))
    assert any(c.old is not None and c.new is not None for c in found)
    assert keypaths._within_one_run(hunk, found) is _within_one_run_whole(hunk, found) is False
