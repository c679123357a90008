"""Is a knob change explained? A prose comment next to it, or the PR description.

`lines.comment_near` and `prtext.description_explains`, tuned for knob settings:
pragmas and commented-out code explain nothing, and a `#` inside a YAML value (a folded
scalar) is no comment a reader sees.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from bot.core.snapshot import ChangedFile
from rules.analysis.lines import comment_near
from rules.analysis.memo import memoized
from rules.analysis.prtext import description_explains, gives_reason
from rules.analysis.yamlscan import is_yaml, view

_SHELL_KEYS = frozenset({"run", "script", "command", "commands", ""})
_PRAGMA_RE = re.compile(
    r"^(?:noqa|type:|fmt:|pragma|pylint:|nosec|isort:|yapf:|ruff:|mypy:|pyright:)", re.I
)
_CODE_COMMENT_RE = re.compile(r"^[\"']?-{0,2}[\w.-]+[\"']?\s*[:=,]\s*[\"']?[\w.+-]*[\"']?\s*,?$")
_REFERENCE_RE = re.compile(r"#\d+|https?://")
_WORD_RE = re.compile(r"[^\W\d_]{2,}")
_NAME_RE = re.compile(r"[A-Za-z][\w-]{2,80}")
_RULE_RE = re.compile(r"^\s*(?:#|//)\s*[-=#*~]{4,}\s*$")
# A retune "to accommodate variance" has a reason: the value was tuned to a noisy result.
RETUNE_REASONS = re.compile(
    r"\b(?:varian\w*|fluctuat\w*|unstable|instabilit\w*|noisy|noise|jitter\w*|"
    r"non-?determinis\w*)\b", re.I)
# As `description_explains` splits: at `.`, `!`, `?`, `;` or a line break.
_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def value_lines(changed: ChangedFile) -> frozenset[int]:
    """Head lines where a `#` is part of a YAML value rather than a comment a reader sees.

    That is folded scalars (`server_args: >-`: the lines are joined and passed on) and
    literal scalars other than shell scripts (`run: |`, `command: |`, Buildkite `- |`,
    whose shell does treat `#` as a comment). Scanned as block-scalar-comment does.
    """
    return _value_lines(changed) if is_yaml(changed.path) else frozenset()


@memoized
def _value_lines(changed: ChangedFile) -> frozenset[int]:
    return frozenset(
        line.number for line in view(changed) if line.block is not None
        and (line.block.folded or line.block.key not in _SHELL_KEYS)
    )


# A line that starts a block of its own: a list item, heading, quote, table row or fence.
_BLOCK_START_RE = re.compile(r"^(?:[-*+]\s|\d{1,3}[.)]\s|#{1,6}\s|>|\||```|~~~)")
_WRAP_WIDTH = 72  # commit messages are wrapped at 72 columns (or wider)
_WRAP_MIN = 40  # a shorter line ended where its author ended it


def unwrapped(text: str) -> str:
    """The text with hard-wrapped lines joined: a line continues the one above when that
    one ends with no sentence mark and is full (the next word would not have fit in 72
    columns). Commit messages wrap at ~72 columns, so a knob's name and its reason often
    sit on two lines of one sentence; list items, headings and code stay lines."""
    out: list[str] = []
    last = ""  # the previous physical line
    fenced = False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        tail = last.rstrip()
        if (out and stripped and tail and not fenced and len(tail) >= _WRAP_MIN
                and tail[-1] not in ".!?;:" and _BLOCK_START_RE.match(stripped) is None
                and len(tail) + 1 + len(stripped.split(None, 1)[0]) > _WRAP_WIDTH):
            out[-1] = f"{out[-1].rstrip()} {stripped}"
        else:
            out.append(line)
        last = line
    return "\n".join(out)


class Description:
    """The PR text, with `description_explains` answers memoized and cheaply pre-checked.

    A sentence can only explain a knob it names, so a subject absent from the whole
    text (one substring search) skips the sentence scan; large PR bodies stay cheap.
    With `unwrap`, hard-wrapped lines are joined before sentences are split; `reasons`
    adds words that count as a reason besides `gives_reason`'s.
    """

    def __init__(self, text: str, *, unwrap: bool = False,
                 reasons: re.Pattern[str] | None = None) -> None:
        text = unwrapped(text[:200_000]) if unwrap else text
        self.text = text
        self._reasons = reasons
        self._normalized = text[:200_000].lower().replace("_", "-")
        self._spaced = " ".join(self._normalized.replace("-", " ").split())
        self._memo: dict[tuple[str, ...], str | None] = {}

    def explains(self, subjects: Sequence[str]) -> str | None:
        """The sentence naming a subject with a reason. A knob may be named in words
        (`expandable segments`, `GPU memory utilization`); the words of its own name
        are no reason (`memory` in `gpu_memory_utilization`)."""
        key = tuple(subjects)
        if key not in self._memo:
            spaced = [s.lower().replace("_", " ").replace("-", " ").strip() for s in key if s]
            named = any(s and s.lower().replace("_", "-") in self._normalized for s in key)
            named = named or any(" " in s and s in self._spaced for s in spaced)
            self._memo[key] = self._explains(key) if named else None
        return self._memo[key]

    def _explains(self, subjects: Sequence[str]) -> str | None:
        text = self.text[:200_000]
        names = [s for s in subjects if s and _NAME_RE.fullmatch(s) and ("_" in s or "-" in s)]
        joined = []
        for name in names:
            words = [w for w in re.split(r"[-_]+", name) if w]
            glued = "".join(words)
            pattern = r"(?<![\w-])" + r"[\s_-]+".join(map(re.escape, words)) + r"(?![\w-])"
            text = re.sub(pattern, glued, text, flags=re.I)
            joined.append(glued)
        found = self._find(text, [*subjects, *joined])
        if found is None or not joined:
            return found
        # Quote the author's sentence, not the one with the knob's words glued together.
        original = self._find(self.text, subjects)
        return original or found

    def _find(self, text: str, subjects: Sequence[str]) -> str | None:
        found = description_explains(text, subjects)
        if found is not None or self._reasons is None or self._reasons.search(text) is None:
            return found
        wanted = [s.lower().replace("_", "-") for s in subjects if s]
        for sentence in _SENTENCE_RE.split(text):
            normalized = sentence.lower().replace("_", "-")
            if any(w in normalized for w in wanted) and (
                    self._reasons.search(sentence) or gives_reason(sentence)):
                sentence = sentence.strip()
                return sentence if len(sentence) <= 200 else sentence[:197] + "..."
        return None


def is_prose(comment: str) -> bool:
    """A comment that could explain something: not a pragma, not commented-out code."""
    text = comment.strip()[:400]
    if _PRAGMA_RE.match(text) or _CODE_COMMENT_RE.match(text):
        return False
    if _REFERENCE_RE.search(text):
        return True  # "see #1234" points at the explanation
    # Two words at least (`# optional` explains nothing); CJK text has no spaces.
    return len(_WORD_RE.findall(text)) >= 2 or len(_CJK_RE.findall(text)) >= 4


def adjacent_comment(
    changed: ChangedFile, numbers: Iterable[int], radius: int = 2
) -> tuple[int, str] | None:
    """A prose `#` comment within `radius` head lines of any of `numbers`.

    A `#` in a YAML value (see `value_lines`) reaches the program and is not a comment
    anyone reads as one.
    """
    return comment_near(changed, numbers, radius,
                        lambda n, comment: is_prose(comment) and n not in value_lines(changed)
                        and not _heading(changed, n))


def _heading(changed: ChangedFile, number: int) -> bool:
    """A section heading (`# Test infra` under or over a `# ------` rule) names the
    section, it gives no reason for a value in it."""
    return any(_RULE_RE.match(changed.head_line(n) or "") for n in (number - 1, number + 1))
