"""The reason a finding quotes: a prose comment next to the change, or a sentence of
the PR description.

A commented-out line of code (`# print("metrics", metrics)`) sits where a reason would
but says nothing about the change, and a comment already in the base was written before
it. A description is read past its hard line wraps, and a few reasons the knob readers
do not count are counted here: run-to-run noise, for a removed eval entry its run
time ("mmlu 3h24mins", "takes too long"), and for a raised limit the old value stated as
exceeded ("now exceeds 120 minutes"). A sentence whose only reason word is the knob's
own name ("increase build timeout from 120 to 180 minutes": `timeout`) restates the
change and is no reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from functools import lru_cache

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import RETUNE_REASONS, Description, adjacent_comment
from rules.analysis.lines import MAX_LINE, code_part, comment_near, comment_text, known_lines
from rules.analysis.prtext import gives_reason

_MAX_BLOCK_LINES = 6  # lines of one comment quoted, either way from the line found
_MAX_CODE = 300  # longer comments are not parsed: prose, or code no one quotes
# Nodes only code has; prose that happens to parse (`flaky or slow`) has none of them.
# A bare annotation (`NOTE: slow`) is how prose labels a remark, not code.
_CODE_NODES = (ast.Call, ast.Assign, ast.AugAssign, ast.Subscript,
               ast.Attribute, ast.Import, ast.ImportFrom, ast.Return, ast.FunctionDef,
               ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.For, ast.If, ast.While,
               ast.Assert, ast.Raise, ast.Lambda)
# What an eval costs to run, in the words of a PR that drops it for that.
_COST_RE = re.compile(
    r"\b(?:costs?|took|takes?|taking|run ?time|running time|wall ?time|execution time|"
    r"excution time|too (?:long|slow|expensive|costly)|expensive|time-consuming|"
    r"\d+(?:\.\d+)?\s*(?:h|hrs?|hours?|mins?|minutes?)(?:\d+\s*(?:m|mins?|minutes?))?)\b",
    re.I)
# Run-to-run noise as the reason a bound was widened: the knob readers' retune reasons,
# and "to accommodate" the results.
_ACCOMMODATE_RE = re.compile(r"\baccommodat\w*\b", re.I)
# Between words: what `_` / `-` glue or markdown wraps (`~x~`, `**x**`), and a period
# that ends a sentence (not the one in `test_x.py` or `v1.2`).
_SEPARATOR_RE = re.compile(r"[^\w/:@+.]+|_|\.(?!\w)")
_LETTER_RE = re.compile(r"[A-Za-z]")
_BLOCK_SPLIT_RE = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;])\s+")
_BULLET_RE = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_MAX_BLOCKS = 2_000
_ASIDE_RE = re.compile(r"\s*\([^()]{0,300}\)")
_QUOTED = 160  # what `messages.cut` keeps of a quote
_MAX_SENTENCE = 1_000
# The old limit stated as outgrown: what a raised timeout or ceiling answers.
_EXCEEDED_RE = re.compile(r"\b(?:exceed\w*|surpass\w*|longer than|more than|over|beyond|"
                          r"past|hit\w*|reach\w*|goes? above)\b", re.I)
_NAME_SPLIT_RE = re.compile(r"[-_\s.]+")


def is_code(comment: str) -> bool:
    """The comment is a line of Python commented out (`print(x)`, `x = f(y)`,
    `def test_x(self):`), not prose."""
    text = comment.strip()
    if not text or len(text) > _MAX_CODE:
        return False
    if text.endswith(":"):
        text += " pass"  # a block opener parses with a body
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, _CODE_NODES) or (
        isinstance(node, ast.AnnAssign) and node.value is not None) for node in ast.walk(tree))


def reason_comment(changed: ChangedFile, lines: Sequence[int]) -> tuple[int, str] | None:
    """The prose comment next to `lines` that was written with the change: one already
    in the base (the repo's boilerplate, or an old comment two lines up while the new
    one sits right above the change) is tried past, then none."""
    for radius in (2, 1):
        found = comment_near(changed, lines, radius, lambda n, text: not is_code(text)
                             and adjacent_comment(changed, (n,), radius=0) is not None)
        if found is None:
            return None
        if not _was_there(changed, found[1]):
            return found[0], _whole_comment(changed, found[0], found[1])
    return None


def _whole_comment(changed: ChangedFile, number: int, text: str) -> str:
    """The comment a line belongs to: a comment-only line continues through the
    comment-only lines above and below it (a three-line `# TODO(#1053): restore …`
    is quoted whole, not from its middle line)."""
    head = known_lines(changed)
    if code_part(head.get(number, "")).strip():
        return text  # a comment after code stands alone
    parts = [text]
    for step in (-1, 1):
        n = number + step
        while abs(n - number) <= _MAX_BLOCK_LINES:
            line = head.get(n)
            more = comment_text(line[:MAX_LINE]) if line is not None else None
            if line is None or code_part(line).strip() or not more or is_code(more):
                break
            if step < 0:
                parts.insert(0, more)
            else:
                parts.append(more)
            n += step
    return " ".join(parts)


def _was_there(changed: ChangedFile, comment: str) -> bool:
    """The comment was in the base already (on a removed or unchanged line): written
    before this change, it cannot be the reason for it."""
    text = " ".join(comment.split())
    if len(text) < 8:
        return False
    base = changed.base_text
    if base is None:
        base = "\n".join(line.text for hunk in changed.hunks for line in hunk.removed)
    return text in " ".join(base.split())


def description_reason(description: Description, subjects: Sequence[str],
                       entries: Sequence[str] = (), old: str = "") -> str | None:
    """The sentence of the description that names a subject and says why it changed.

    Beyond `Description.explains`, hard-wrapped lines of a paragraph or list item are
    read as one sentence, noise is a reason ("to accommodate variance"), for removed
    eval `entries` so is what an entry costs to run ("mmlu 3h24mins"), and for a raised
    limit the `old` value said to be exceeded."""
    said = description.explains(subjects)
    if said is not None and not _restates(said, subjects):
        return said
    names = [_words(s) for s in (*subjects, *entries) if len(s) >= 3 and _LETTER_RE.search(s)]
    names = [n for n in names if n and n in _spaced(description.text)]
    return _named_reason(description.text, subjects, entries, names) or _exceeded(
        description.text, old)


def _restates(sentence: str, subjects: Sequence[str]) -> bool:
    """The sentence's only reason words are the words of the knob's own name."""
    words = {w.lower() for s in subjects for w in _NAME_SPLIT_RE.split(s) if len(w) >= 3}
    if not words:
        return False
    pattern = r"\b(?:" + "|".join(map(re.escape, sorted(words))) + r")\b"
    return not _gives_reason(re.sub(pattern, " ", sentence, flags=re.I))


def _exceeded(text: str, old: str) -> str | None:
    """The sentence saying the old limit is exceeded ("now exceeds 120 minutes")."""
    value = _words(old) if len(old.strip()) >= 2 and any(c.isdigit() for c in old) else ""
    if not value.strip():
        return None
    for sentence, words, _, _ in _sentences(text):
        if value in words and _EXCEEDED_RE.search(sentence):
            return sentence
    return None


def _named_reason(text: str, subjects: Sequence[str], entries: Sequence[str],
                  names: Sequence[str]) -> str | None:
    if not names:
        return None
    for sentence, words, why, cost in _sentences(text):
        if not (why or (cost and entries)) or not any(n in words for n in names) or (
                why and not (cost and entries) and _restates(sentence, subjects)):
            continue
        # A message quotes 160 characters: a long sentence loses its asides first
        # (a list of models in parentheses), so that the reason stays in the quote.
        short = _ASIDE_RE.sub("", sentence)
        if len(sentence) > _QUOTED and any(n in _words(short) for n in names) and (
                _gives_reason(short) or (entries and _COST_RE.search(short))):
            return short
        return sentence
    return None


@lru_cache(maxsize=4)
def _spaced(text: str) -> str:
    return _words(text[:200_000])


@lru_cache(maxsize=4)
def _sentences(text: str) -> tuple[tuple[str, str, bool, bool], ...]:
    """(sentence, its words, gives a reason, states a cost) of the description, read
    past hard line wraps: once per description, however many findings ask. A run of
    text without a sentence end is no sentence anyone reads as one (a pasted log). The
    title (the first line) is a sentence of its own, never run into the body's first."""
    out: list[tuple[str, str, bool, bool]] = []
    title, _, body = text[:200_000].partition("\n")
    for block in [title, *_BLOCK_SPLIT_RE.split(body)][:_MAX_BLOCKS]:
        flat = _BULLET_RE.sub("", " ".join(block.split()))
        out += [(s, _words(s), _gives_reason(s), _COST_RE.search(s) is not None)
                for s in _SENTENCE_END_RE.split(flat) if s and len(s) <= _MAX_SENTENCE]
    return tuple(out)


def _gives_reason(sentence: str) -> bool:
    return gives_reason(sentence) or RETUNE_REASONS.search(sentence) is not None or (
        _ACCOMMODATE_RE.search(sentence) is not None)


def _words(text: str) -> str:
    """The text as spaced words, so a name matches whole (`~mmlu 3h`, `the mmlu.`)."""
    return " " + " ".join(_SEPARATOR_RE.sub(" ", text.lower()).split()) + " "
