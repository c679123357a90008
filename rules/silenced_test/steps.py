"""What a YAML line belongs to: a step that runs tests or one that only reports, an
entry that defines a test, an `env:` block.

`continue-on-error` on an upload, report, notification or bot step keeps a side job
from failing the workflow; it silences no test. `SKIP_WARMUP: 1` under `env:` is a
setting, not a skip list. `enabled: false` silences only an entry that defines a test.
"""

from __future__ import annotations

import re

from rules.analysis.lines import indent_width
from rules.silenced_test.line_structure import YAML_KEY_RE, SilencingView

_SCAN = 60  # lines of one step or entry looked at
_SIDE_STEP_RE = re.compile(
    r"upload|download|report|notif|slack|teams|e-?mail|comment|publish|artifact|codecov|"
    r"coveralls|summary|\bbot\b|label|cache|clean[- ]?up|\bpost\b|wait(?:ing)? for|\bdco\b|"
    r"telemetry|metrics|dashboard|\bpush\b|deploy|\bdocs?\b|\bpages\b|\blogs?\b|status|"
    r"\breview\w*",
    re.I,
)
_TEST_WORD_RE = re.compile(r"\b(?:py)?tests?\b|test_|_test\b|pytest|e2e|\beval\w*|benchmark", re.I)
# A step that runs a script may run tests through it (`bash ci/run.sh`).
_SCRIPT_RE = re.compile(r"\.sh\b|\bmake\s|\btox\b|\bnox\b")
_ENV_KEYS = frozenset({"env", "environment", "variables", "vars"})
_TEST_TOKEN_RE = re.compile(r"(?:^|_)tests?(?:_|$)|(?:^|_)(?:models?|cases?|suites?)(?:_|$)")


def side_step(view: SilencingView, n: int) -> bool:
    """Whether line n sits in a step that reports or notifies rather than runs tests:
    its name or action says so (`Upload coverage`, `uses: actions/upload-artifact`)."""
    owner = view.owner(n)
    if owner is None:
        return False
    name, start = owner
    head = (view.get(start) or "").lstrip()
    if not head.startswith("- "):
        return False  # a job-level setting: the whole job may run tests
    values: dict[str, str] = {"uses": "", "run": ""}
    base = indent_width(view.get(start) or "")
    for m in range(start, start + _SCAN):
        text = view.get(m)
        if text is None or (m > start and text.strip() and indent_width(text) <= base):
            break
        key = YAML_KEY_RE.match(text.replace("- ", "  ", 1) if m == start else text)
        if key and key.group("key") in values:
            values[key.group("key")] += " " + (key.group("val") or "")
    if _SIDE_STEP_RE.search(name) and not re.match(r"\s*(?:run\s+)?(?:py)?tests?\b", name, re.I):
        return True
    return _SIDE_STEP_RE.search(values["uses"]) is not None and \
        _TEST_WORD_RE.search(values["run"]) is None


def not_a_test_step(view: SilencingView, n: int) -> bool:
    """Whether line n sits in a step that provably runs no test: every line of the step
    is known and neither its name nor its `run`/`uses`/`command` mentions a test, an
    eval or a benchmark (`Build docker image`, an AI review action)."""
    owner = view.owner(n)
    if owner is None:
        return False
    name, start = owner
    head = view.get(start) or ""
    if not head.lstrip().startswith("- "):
        return False  # a job-level setting: the whole job may run tests
    base = indent_width(head)
    body = [head]
    for m in range(start + 1, start + _SCAN):
        text = view.get(m)
        if text is None:
            return False  # part of the step is not in the patch: can't tell
        if text.strip() and indent_width(text) <= base:
            break
        body.append(text)
    return _TEST_WORD_RE.search(" ".join([name, *body])) is None and \
        _SCRIPT_RE.search(" ".join(body)) is None


def checked_later(view: SilencingView, n: int) -> bool:
    """Whether line n's step has an `id:` whose outcome a later step tests
    (`if: steps.<id>.outcome == 'failure'` then `exit 1`): failures are deferred to the
    end of the job, not hidden."""
    owner = view.owner(n)
    if owner is None:
        return False
    _, start = owner
    base = indent_width(view.get(start) or "")
    step_id = None
    for m in range(start, start + _SCAN):
        text = view.get(m)
        if text is None or (m > start and text.strip() and indent_width(text) <= base):
            break
        key = YAML_KEY_RE.match(text.replace("- ", "  ", 1) if m == start else text)
        if key and key.group("key") == "id":
            step_id = (key.group("val") or "").strip().strip("\"'")
    if not step_id:
        return False
    pattern = re.compile(rf"steps\.{re.escape(step_id)}\.(?:outcome|conclusion)\b")
    return any(pattern.search(text) for m, text in view.lines.items() if m > start)


def silences_a_test_step(view: SilencingView, n: int) -> bool:
    """`continue-on-error` on line n hides a test's failure: the step may run tests, is
    no side step (upload, report, bot), and no later step fails on its outcome."""
    return not (side_step(view, n) or not_a_test_step(view, n) or checked_later(view, n))


def in_env(parent: str | None, name: str) -> bool:
    """An environment variable (not a list of tests to skip, unless its name says so)."""
    if parent is None or parent.lower() not in _ENV_KEYS:
        return False
    return _TEST_TOKEN_RE.search(name.lower()) is None


def test_entry(view: SilencingView, n: int) -> str | None:
    """The list entry that line n is a key of, when it defines a test (`- name: test_x`
    or a sibling key naming a test command), as its first line's text."""
    ind = indent_width(view.get(n) or "")
    for m, text in view.back(n):
        if indent_width(text) >= ind:
            continue
        if not text.lstrip().startswith("- "):
            return None
        entry = [text]
        for k in range(m + 1, m + _SCAN):
            other = view.get(k)
            if other is None or (other.strip() and indent_width(other) <= indent_width(text)):
                break
            entry.append(other)
        return text.strip() if _TEST_WORD_RE.search(" ".join(entry)) else None
    return None
