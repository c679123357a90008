"""Silencing by deletion from a CI matrix: an entry (`- name: …-longseq` with its `os:`
and `config_file_path:`) removed from a workflow's matrix or test list, in a PR that
says the test fails and is taken out for now ("did not pass the test and has been
temporarily taken offline"). Without such words a removed entry is a model retired,
moved or renamed: maintenance. An entry whose values come back on an added line is
moved; one whose config file the PR deletes is retired with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rules.analysis.lines import MAX_LINE, indent_width, sides
from rules.analysis.prtext import prose_sentences
from rules.analysis.prtext.markdown import clean
from rules.silenced_test.line_structure import YAML_KEY_RE, SilencingView
from rules.silenced_test.pr_failing import PrFailing
from rules.silenced_test.removals import PullRequestAdds, head_line_after
from rules.silenced_test.silencing_detectors import NOT_RUN, Hit
from rules.silenced_test.skip_names import skip_name

# Taking a test out: removed, disabled, dropped, taken (or put) offline.
_TAKEN_OUT_RE = re.compile(
    r"\b(?:remov\w*|disabl\w*|drop(?:s|ped|ping)?|delet\w*|comment\w* out|offline|"
    r"(?:tak(?:e|es|en|ing)|took)\s+(?:\w+\s+)?(?:out|off|down))\b", re.I)
_NOT_PASSING_RE = re.compile(r"\b(?:did|does|do|could|can)(?:\s+not|n't)\s+pass\w*|"
                             r"\bnot passing\b", re.I)
# What is taken out is a test: not "Remove the `tee` pipeline, which leads to hangs".
_TEST_NOUN_RE = re.compile(r"\b(?:tests?|testing|cases?|ci|jobs?|nightly|nightlies|"
                           r"entr(?:y|ies)|models?|configs?|suites?)\b", re.I)
_SHORT_BODY = 5  # prose sentences: a description this short is about one change
_MIN_WORDS = 5  # shorter lines are template answers and stamps ("No", "- vLLM version: …")
# Keys and values that make a list item a test entry (a model config, a test case).
_TESTISH_RE = re.compile(r"test|config|case|suite|model|\.ya?ml\b|\.py\b", re.I)
_MATRIX_KEYS = frozenset({"matrix", "include", "strategy"})
_MAX_ITEM_LINES = 20  # keys of one entry
_MAX_UP = 400  # base lines walked up to the list's key


def says_taken_out(title: str, body: str, reason: re.Pattern[str]) -> PrFailing:
    """Where the PR says it takes a test out because it fails: the title or a short
    description covers every entry; a sentence of a longer one, the entries it names."""
    def taken_out(sentence: str) -> bool:
        return _TAKEN_OUT_RE.search(sentence) is not None and _TEST_NOUN_RE.search(
            sentence) is not None and (reason.search(sentence) is not None
                                       or _NOT_PASSING_RE.search(sentence) is not None)

    if taken_out(title[:1000]):
        return PrFailing(True)
    prose = [s for s in prose_sentences(clean(body[:20_000]))[:400]
             if len(s.split()) >= _MIN_WORDS and not s.lstrip().startswith("#")]
    said = tuple(s.lower().replace("-", "_") for s in prose if taken_out(s))
    return PrFailing(bool(said) and len(prose) <= _SHORT_BODY, said)


def _list_key(view: SilencingView, old_no: int, width: int) -> tuple[str, bool] | None:
    """The key of the list holding the base line `old_no` (an item indented `width`),
    and whether a `matrix:` encloses it; None without the base text or such a key."""
    text = view.changed.base_text
    if text is None:
        return None
    lines = text.splitlines()
    key: str | None = None
    level = width
    for n in range(min(old_no - 2, len(lines) - 1), max(-1, old_no - 2 - _MAX_UP), -1):
        line = lines[n][:MAX_LINE]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        at = indent_width(line)
        if key is None:
            if at > width or (at == width and stripped.startswith("-")):
                continue  # a sibling entry, or one of its keys
            match = YAML_KEY_RE.match(line)
            if match is None or match.group("dash"):
                return None
            key, level = match.group("key"), at
        elif at < level:
            match = YAML_KEY_RE.match(line)
            if match and match.group("key").lower() in _MATRIX_KEYS:
                return key, True
            level = at
        if key is not None and at == 0:
            break
    return (key, False) if key is not None else None


def matrix_entry_hits(view: SilencingView, adds: PullRequestAdds,
                      taken_out: PrFailing) -> Iterator[Hit]:
    """Hits for whole matrix or test-list entries this YAML file's hunks remove."""
    for hunk in view.changed.hunks:
        old = sides(hunk)[0]
        for i, (old_no, text, removed) in enumerate(old):
            match = YAML_KEY_RE.match(text[:MAX_LINE]) if removed else None
            if match is None or not match.group("dash") or old_no is None:
                continue
            width = indent_width(text)
            values = [(match.group("key"), match.group("val") or "")]
            whole = True
            for _, line, gone in old[i + 1:i + 1 + _MAX_ITEM_LINES]:
                if line.strip() and indent_width(line) <= width:
                    break
                key = YAML_KEY_RE.match(line[:MAX_LINE])
                whole = whole and (gone or not line.strip())
                if key:
                    values.append((key.group("key"), key.group("val") or ""))
            if not whole or len(values) < 2 or not any(
                    _TESTISH_RE.search(k) or _TESTISH_RE.search(v) for k, v in values):
                continue
            holder = _list_key(view, old_no, width)
            if holder is None or skip_name(holder[0]) or holder[0].lower() == "exclude" or not (
                    holder[1] or _TESTISH_RE.search(holder[0])):
                continue
            named = [v.strip().strip("\"'") for _, v in values if len(v.strip()) >= 4]
            if any(v in adds.names or v in adds.words or any(
                    p.endswith("/" + v) or p == v for p in adds.removed_paths) for v in named):
                continue  # moved or renamed, or retired with its config
            if not taken_out.about(named):
                continue
            at = head_line_after(hunk, old_no)
            if at is not None:
                name = named[0] if named else match.group("key")
                yield Hit(at, f"matrix entry `{name[:80]}`", NOT_RUN, name, at, "removed",
                          f" from `{holder[0]}`", alone=True)
