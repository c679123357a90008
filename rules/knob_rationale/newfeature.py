"""Knobs of a harness the PR adds: variables that a new file of the PR reads.

"support SWE-bench Lite validation" adds `run_swebench_lite.sh`, which reads
`SWEBENCH_CASE_TIMEOUT`, and gives that variable a default in the existing launcher
(`SWEBENCH_CASE_TIMEOUT="${SWEBENCH_CASE_TIMEOUT:-3600}"`). The value has no previous
value to be retuned from: it configures the feature the PR introduces.
"""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.knobs import Setting

# A multi-word name (`SWEBENCH_CASE_TIMEOUT`, `case_timeout`): one word is too common.
_NAME = r"([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)"
_READS_RE = re.compile(
    rf"\$\{{?{_NAME}"  # shell / YAML `${NAME:-…}`, `$NAME`
    rf"|environ(?:\.get)?\s*[\[(]\s*[\"']{_NAME}[\"']"  # os.environ["NAME"] / .get("NAME")
    rf"|getenv\(\s*[\"']{_NAME}[\"']"
)
_MAX_FILES = 200
_MAX_TEXT = 400_000


def new_file_reads(snapshot: PullRequestSnapshot) -> frozenset[str]:
    """Variable names that files added by the PR read."""
    found: set[str] = set()
    for changed in snapshot.files[:_MAX_FILES]:
        if changed.status not in ("added", "copied"):
            continue
        text = changed.head_text or changed.added_text
        for match in _READS_RE.finditer(text[:_MAX_TEXT]):
            found.update(g for g in match.groups() if g)
    return frozenset(found)


def feeds_new_harness(changed: ChangedFile, setting: Setting, reads: frozenset[str]) -> bool:
    """Whether a new knob is a variable the PR's new files read, unknown to this file
    before the PR."""
    if setting.raw not in reads:
        return False
    base = changed.base_text
    if base is None:  # the patch's base side: removed and context lines
        base = "\n".join(line.text for hunk in changed.hunks for line in hunk.lines
                         if line.old_no is not None)
    return re.search(rf"(?<![\w-]){re.escape(setting.raw)}(?![\w-])", base[:_MAX_TEXT]) is None
