"""Properties of the line-based YAML scanner the YAML rules share."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.analysis.yamlscan.scanner import scan
from rules.analysis.yamlscan.yaml_lines import ITEM, split_key, strip_comment

LINES = st.lists(st.one_of(
    st.sampled_from([
        "jobs:", "  build:", "    env:", "      A: 1", "    steps:", "      - run: |",
        "          echo # x", "      - run: >-", "          a", "  - |", "- >+2", "---", "",
        "key: 'a # b' # c", "? x", "-", "- - y", "\t#", "   # c", "k: !!str |",
    ]),
    st.text(max_size=40),
), max_size=40)


@settings(max_examples=300, deadline=None)
@given(LINES)
def test_every_line_is_classified_once(lines: list[str]) -> None:
    text_lines = "\n".join(lines).splitlines()
    scanned = scan(enumerate(text_lines, start=1))
    assert [line.number for line in scanned] == list(range(1, len(text_lines) + 1))
    for line in scanned:
        assert len(line.anchors) == len(line.path)
        if line.block is not None:
            assert line.block.first <= line.number <= line.block.last


@settings(max_examples=200, deadline=None)
@given(LINES, st.text(max_size=30))
def test_partial_views_never_raise(lines: list[str], section: str) -> None:
    scan(enumerate(lines, start=10), full=False, section=section)


def test_paths_of_a_workflow() -> None:
    text = """\
env:
  A: 1
jobs:
  build:
    steps:
      - name: x
        env:
          B: 2
        run: >-
          echo hi
          # not a comment
      - run: echo
"""
    by_number = {line.number: line for line in scan(enumerate(text.splitlines(), start=1))}
    assert by_number[2].path == ("env",)
    assert by_number[8].path == ("jobs", "build", "steps", ITEM, "env")
    assert by_number[11].block is not None and by_number[11].block.header == "run: >-"
    assert by_number[11].block.key_line == 9
    assert by_number[12].path == ("jobs", "build", "steps", ITEM)


@given(st.text(max_size=80))
def test_split_key_and_strip_comment_are_total(text: str) -> None:
    split_key(text)
    strip_comment(text)
