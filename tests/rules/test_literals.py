"""`any_of` answers exactly as testing each word: ASCII words with regex metacharacters,
texts with non-ASCII characters and lone surrogates; a non-ASCII word takes the slow path."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.analysis.literals import any_of
from rules.silenced_test.line_structure import ANY_HINT

WORD = st.sampled_from(["skip", "if:", "-k", "xit(", "--deselect", "a.b", "[x]", "|", "\\",
                        "é", "ab", "b"])
TEXT = st.text(alphabet="abkxist(:-.|[]\\é\u212a\ud800 \n", max_size=40)


@settings(max_examples=400, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=5), st.lists(TEXT, min_size=1, max_size=4))
def test_any_of_equals_testing_each_word(words: list[str], texts: list[str]) -> None:
    contains = any_of(words)
    for text in texts:
        assert contains(text) == any(word in text for word in words)


def test_the_hints_are_found_in_one_pass() -> None:
    # Guards the fast path: the hints are ASCII, so RE2 answers (not the fallback).
    contains = any_of(ANY_HINT)
    assert contains.__name__ == "contains"
    assert contains("  run: pytest -k 'not slow'") and contains("é xit(")
    assert not contains("nothing here \ud800 é")
