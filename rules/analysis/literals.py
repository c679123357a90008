"""Whether a text contains any of a fixed set of ASCII words: one pass, not one per word.

`any(word in text for word in words)` walks the text once per word; with a few dozen
words over every file of a large PR (silenced-test's hints) that is most of the test's
cost. One RE2 search of the alternation (a DFA over the text's UTF-8 bytes) answers the
same question in one pass: an ASCII word occurs in a text exactly when its bytes occur
in the text's UTF-8 bytes, which never hold an ASCII byte inside a multi-byte
character. Without RE2, or for a word that is not ASCII, the per-word test is used.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable


def any_of(words: Iterable[str]) -> Callable[[str], bool]:
    """`text -> any(word in text for word in words)`, in one pass where it can."""
    wanted = tuple(words)
    try:
        re2 = importlib.import_module("re2")
    except ImportError:
        re2 = None
    if re2 is None or not wanted or not all(word and word.isascii() for word in wanted):
        return lambda text: any(word in text for word in wanted)
    options = re2.Options()
    options.max_mem = 8 << 20
    search = re2.compile("|".join(map(re.escape, wanted)), options).search

    def contains(text: str) -> bool:
        # `surrogatepass`: a PR's JSON may hold a lone surrogate, which UTF-8 refuses;
        # its bytes are not ASCII either, so the answer is unchanged.
        return search(text.encode("utf-8", "surrogatepass")) is not None

    return contains
