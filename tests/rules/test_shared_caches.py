"""Analyses the rules share per file or per hunk: cached once, equal to a fresh one.

Several rules scan the same YAML file, split the same hunk into its two sides and
read the same knob settings; those results are kept on the `ChangedFile`/`Hunk`
(`derived`) and reused. These tests pin that a cached answer is the answer a fresh
computation gives, that caches don't leak into equality or across
`dataclasses.replace`, and that the fast paths behind them agree with the plain ones.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.snapshot import ChangedFile, DiffLine, Hunk, LineKind
from rules.analysis.knobs import categories as knob_options
from rules.analysis.knobs import changes as knob_changes
from rules.analysis.knobs import names as knob_names
from rules.analysis.knobs import settings as knobs
from rules.analysis.lines import hunk_sides
from rules.analysis.yamlscan.scanner import scan
from rules.analysis.yamlscan.views import fresh_view, view
from tests.conftest import make_snapshot
from tests.rules.yamlscan_reference import reference_scan

YAML_LINES = st.lists(st.one_of(
    st.sampled_from([
        "jobs:", "  build:", "    env:", "      A: 1", "    steps:", "      - run: |",
        "          echo # x", "      - run: >-", "          a", "  - |", "- >+2", "---", "...",
        "", "  ", "key: 'a # b' # c", '"q": 1', "? x", "-", "- - y", "\t#", "   # c",
        "k: !!str |", "  - - a: b", "a: |2", "    - a:", "  b: c # d", "- k: >-", "server_args: >-",
        "  --max-num-batched-tokens 8192", "  matrix:", "    part: [0, 1, 2]",
    ]),
    st.text(alphabet=" -:#|>ab\t'\"\u3000", max_size=12),
), max_size=30)


def _file(head: str, base: str = "", path: str = "ci/pipeline.yaml",
          patch_only: bool = True) -> ChangedFile:
    return make_snapshot([{"path": path, "base": base, "head": head}],
                         patch_only=patch_only).files[0]


@settings(max_examples=300, deadline=None)
@given(YAML_LINES, st.booleans(), st.sampled_from(["", "jobs:", "args: >-", "x: |2", "- a"]))
def test_scanner_equals_the_plain_reference(lines: list[str], full: bool, section: str) -> None:
    numbered = list(enumerate(lines, start=1))
    assert scan(numbered, full=full, section=section) == reference_scan(
        numbered, full=full, section=section)


@settings(max_examples=100, deadline=None)
@given(YAML_LINES, YAML_LINES, st.booleans())
def test_cached_view_equals_a_fresh_one(base: list[str], head: list[str], patch_only: bool) -> None:
    changed = _file("\n".join(head), "\n".join(base), patch_only=patch_only)
    cached = view(changed)
    assert view(changed) is cached  # computed once per file
    fresh = fresh_view(changed)
    assert cached.full == fresh.full and cached.lines == fresh.lines


def test_caches_stay_out_of_equality_and_replace() -> None:
    changed = _file("a: 1\nb: 2\n", "a: 1\n")
    twin = _file("a: 1\nb: 2\n", "a: 1\n")
    view(changed)
    hunk_sides.sides(changed.hunks[0])
    assert changed.derived and changed.hunks[0].derived
    assert changed == twin and hash(changed.hunks[0]) == hash(twin.hunks[0])
    moved = dataclasses.replace(changed, surface="ci-config")
    assert moved.derived == {}  # a new file value starts with no cached analyses
    assert view(moved) is not view(changed)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("+- "), st.text(max_size=10)), max_size=80))
def test_hunk_added_and_removed_are_the_filtered_lines(rows: list[tuple[str, str]]) -> None:
    lines, old, new = [], 1, 1
    for tag, text in rows:
        kind = LineKind(tag)
        lines.append(DiffLine(kind, text, None if tag == "+" else old, None if tag == "-" else new))
        old, new = old + (tag != "+"), new + (tag != "-")
    hunk = Hunk(1, old - 1, 1, new - 1, "", tuple(lines))
    assert hunk.added == tuple(x for x in lines if x.kind is LineKind.ADDED)
    assert hunk.removed == tuple(x for x in lines if x.kind is LineKind.REMOVED)
    assert hunk.added is hunk.added
    changed = ChangedFile(path="x.py", hunks=(hunk,))
    assert changed.added_text == "\n".join(x.text for x in hunk.added)
    assert changed.added_line_numbers == {x.new_no for x in hunk.added}


KNOB_LINES = st.lists(st.sampled_from([
    "  --max-num-batched-tokens 8192", "  --max-num-batched-tokens 16384", "  timeout: 30",
    "  timeout: 60", '    ARGS = ["--mem-fraction-static", "0.2"]', "  rtol: 1e-3",
    "  - name: acc", "    value: 0.8", "    value: 0.7", "  TP: 4", "  a.b_timeout: 5",
    "  \u212atimeout: 1", "  t\u0130meout: 2", "  max_parallel: 3", "  parallelism: 2",
    "    --timeout", "      600", "def test_x():", "- name: step", "  http://x", "", "x",
    "  x = dict(timeout=5)", "  {shard: 1, num_shards: 4}", "  9timeout: 4",
]), max_size=25)


@settings(max_examples=200, deadline=None)
@given(KNOB_LINES, KNOB_LINES, st.sampled_from(["c.yaml", "t.py", "run.sh"]))
def test_knob_changes_are_cached_per_hunk_and_equal_fresh_ones(
    base: list[str], head: list[str], path: str
) -> None:
    changed = _file("\n".join(head), "\n".join(base), path=path)
    wanted = knob_options.shared_filter(Config())
    for hunk in changed.hunks:
        first = knob_changes.hunk_changes(changed, hunk, wanted)
        assert knob_changes.hunk_changes(changed, hunk, wanted) is first
        old, new = hunk_sides._sides(hunk)  # uncached
        head_settings = knobs.extract(new, wanted, yaml_keys=path.endswith(".yaml"),
                                      python=path.endswith(".py"))
        names = {s.name for s in head_settings if s.changed} | {"parallelism", "max-parallel"}
        base_settings = knobs.extract(old, wanted, yaml_keys=path.endswith(".yaml"),
                                      python=path.endswith(".py"), only=frozenset(names))
        assert first == knob_changes.pair(base_settings, head_settings)
        other = knob_names.knob_filter(("timeout",))
        assert knob_changes.hunk_changes(changed, hunk, other) is not first  # another filter
        assert knob_changes.new_unit_lines(hunk) == knob_changes._new_unit_lines_slowly(hunk)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZk_-9 .\n:\t#=\"'[]{}()\u212a\u0130\u03a3\u00e9", max_size=60),
       st.frozensets(st.sampled_from(["timeout", "a-b", "k9", "value", "metric-value",
                                      "-x", "a.b", "z"]), max_size=4))
def test_word_finding_shortcuts_equal_the_regex(text: str, only: frozenset[str]) -> None:
    words = set(knob_names._NAME_TOKEN_RE.findall(text))
    # `present` memoizes raw runs; the word of each is a word the regex finds.
    assert {knob_names._word(run) for run in knob_names._runs(text)} - {""} == words
    wanted = knob_names.KnobFilter(("*timeout*", "k9", "value", "metric-value", "a-b"))
    naming = {w for w in words if wanted.names_knob(w)}
    assert set(wanted.present(text)) == naming
    assert set(wanted.present(text)) == naming  # and again, from the memo
    named = knob_names.named_words(text, only)
    if named is not None:
        def normal(word: str) -> str:
            return word.lower().replace("_", "-")
        expected = {w for w in words if normal(w) in only
                    or (normal(w) == "value" and "metric-value" in only)}
        assert set(named) == expected
