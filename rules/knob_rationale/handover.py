"""Knobs a workflow step hands to the script it runs.

A step's inline `hf download` block is replaced by a call to a shared
`download_model_with_lock.sh`, and the step's `env:` now sets what the script reads
(`MODEL_LOCK_POLL_INTERVAL: "30"`, `MODEL_DOWNLOAD_TIMEOUT: "3h"`). Two readings, neither
a retune:

- a value equal to the default the consuming script gives it (`${NAME:-30}`): the step
  spells out what the script does anyway;
- a timeout handed to a script the step newly calls, where the code the call replaces had
  no time limit at all: a limit set where there was none, which fails loudly (as an added
  `timeout-minutes` does). That the script's own default is another value (2h) does not
  make it a retune of this job: what ran before had no bound. A step that already called
  the script and now overrides its default is still asked about.

The script is read at head from the PR when it changes it, else from the repository view
(the base revision, where an unchanged script is the same).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.knobs import Categories, Change
from rules.analysis.lines import indent_width, known_lines, openers
from rules.analysis.memo import memoized

_YAML = (".yml", ".yaml")
# A script path, matched only from the start of a path-like run (the lookbehind), so
# each run is tried once.
_SCRIPT_RE = re.compile(r"(?<![\w./-])[\w./-]{1,300}\.(?:sh|bash|py)(?!\w)")
_SCRIPT_HINTS = (".sh", ".py", ".bash")
_MAX_WALK = 400
_MAX_SPAN = 600
_MAX_SCRIPTS = 4
_MAX_TEXT = 400_000
# A time limit the replaced code set itself: a timeout knob or the `timeout` command.
_TIMEOUT_RE = re.compile(r"(?i)timeout[\w-]*\s*[:=]\s*\S|\btimeout\s+(?:-\S+\s+)*\d")


def _unquoted(value: str) -> str:
    return value.strip().strip("\"'").strip()


def _step(head: Mapping[int, str], number: int) -> range | None:
    """The head lines of the YAML list item (a step) holding line `number`."""
    for n, text in openers(head, number, _MAX_WALK):
        if text.lstrip().startswith("- "):
            indent = indent_width(text)
            end = n + 1
            while end in head and end - n < _MAX_SPAN:
                line = head[end]
                if line.strip() and indent_width(line) <= indent:
                    break
                end += 1
            return range(n, end)
    return None


def _script_text(snapshot: PullRequestSnapshot, mention: str) -> str | None:
    """The text of the repository script a step mentions (`/workspace/.github/x.sh`,
    `./scripts/x.sh`): the longest path suffix that names a file of the PR or the
    repository."""
    parts = [p for p in mention.split("/") if p and p != "."]
    files = {f.path: f for f in snapshot.files}
    view = snapshot.repo_view
    for k in range(len(parts)):
        path = "/".join(parts[k:])
        changed = files.get(path)
        if changed is not None:
            return changed.head_text
        if view is not None and "/" in path:
            text = view.read(path)
            if text is not None:
                return text
    return None


def _default(text: str, raw: str) -> str | None:
    """The one default a script gives variable `raw` (`${RAW:-D}`, `${RAW:=D}`)."""
    pattern = re.compile(rf"\$\{{{re.escape(raw)}:?[-=]([^}}\s$]{{0,80}})\}}")
    found = {_unquoted(m.group(1)) for m in pattern.finditer(text[:_MAX_TEXT])}
    return found.pop() if len(found) == 1 else None


@memoized
def _removed_text(changed: ChangedFile) -> str:
    return "\n".join(line.text for line in changed.removed_lines)


def handed_to_script(snapshot: PullRequestSnapshot, changed: ChangedFile,
                     change: Change) -> bool:
    """Whether a knob the PR adds to a workflow step is a value the step's script
    would use anyway, or a first time limit for a script the step newly calls."""
    new = change.new
    if change.old is not None or new is None or not changed.path.endswith(_YAML):
        return False
    head = known_lines(changed)
    span = _step(head, new.line)
    if span is None:
        return False
    added = changed.added_line_numbers
    removed = _removed_text(changed)
    value = _unquoted(new.value)
    timeout = Categories().kind(new.name) == "timeout"
    seen = 0
    for n in span:
        line = head.get(n, "")[:2000]
        if not any(hint in line for hint in _SCRIPT_HINTS):
            continue
        for mention in _SCRIPT_RE.findall(line):
            seen += 1
            if seen > _MAX_SCRIPTS:
                return False
            text = _script_text(snapshot, mention)
            if text is None:
                continue
            default = _default(text, new.raw)
            if default is None:
                continue  # the script does not read this knob
            if default == value:
                return True  # what the script does by default
            name = mention.rsplit("/", 1)[-1]
            if timeout and n in added and name not in removed and not _TIMEOUT_RE.search(
                    "\n".join(line.text for line in changed.removed_lines
                              if line.old_no is not None and _in_step(changed, line.old_no,
                                                                      span))):
                return True  # a first limit: the code the call replaces had none
    return False


def _in_step(changed: ChangedFile, old_no: int, span: range) -> bool:
    """Whether a removed base line sat inside the step (between the head lines around
    it): the code the PR replaced there."""
    for hunk in changed.hunks:
        last_new: int | None = None
        for line in hunk.lines:
            if line.new_no is not None:
                last_new = line.new_no
            if line.old_no == old_no and line.new_no is None:
                return last_new is not None and last_new in span
    return False

