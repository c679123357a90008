"""silenced-test's detector for commented-out code: a test, a test line or a CI test
command that a change turns into a comment."""

from __future__ import annotations

import re

from rules.analysis.lines import MAX_LINE, code_part, printed
from rules.silenced_test.gates import tracked
from rules.silenced_test.line_structure import SilencingView
from rules.silenced_test.quoting import clip
from rules.silenced_test.silencing_detectors import (
    ENTRY_RE,
    NOT_RUN,
    SILENCE_REASON_RE,
    Hit,
)
from rules.silenced_test.skip_names import skip_name
from rules.silenced_test.test_commands import command, dropped_invocation, silenced_targets

_COMMENTED_TEST_RE = re.compile(
    r"^\s*#\s*(?:(?:async\s+)?def\s+(test\w*)|class\s+(Test\w*)|(pytest\.param)\(|"
    r"@(pytest\.mark\.parametrize)\()"
)
_TEST_CODE_RE = re.compile(
    r"^(?:(?:async\s+)?def\s+test|class\s+Test|pytest\.param\(|@pytest\.mark\.parametrize|"
    r"assert\b|self\.assert\w*\(|(?:torch|np|numpy)\.testing\.assert\w*\(|register_\w+_ci\(|"
    r"TestFile\()"
)
_YAML_TEST_LINE_RE = re.compile(
    r"pytest|unittest|test_\w|run_suite|run[-_]tests?|^-?\s*label:|^-\s*name:"
    r"|^-\s*(?:script|test\w*|suite|test[-_]suite)\s*:|\.sh\b", re.I
)
# A call that runs something (a Python script, a sub-script, a launcher), not a setup
# line (`export`, `cd`, `pip install`, `echo`).
_SHELL_CALL_RE = re.compile(
    r"^(?:(?:python\d?(?:\.\d+)?|bash|sh|torchrun|accelerate\s+launch|deepspeed|mpirun|"
    r"lm[_-]eval)\s+(?!-m\s+pip\b)\S|\./\S|\S+\.(?:sh|py)(?:\s|$))")
_ENV_PREFIX_RE = re.compile(r"^(?:[A-Za-z_]\w*=(?:\"[^\"]*\"|'[^']*'|\S*)\s+)+")
_FUNC_DEF_RE = re.compile(r"^(?:function\s+)?([A-Za-z_][\w-]*)\s*(?:\(\s*\))?\s*\{\s*$")
_SHELL_WORDS = frozenset({"test", "pytest", "set", "exit", "return", "true", "false"})
_FUNC_CALL_RE = re.compile(r"^([A-Za-z_][\w-]*)(?:\s+[^=|&;<>]*)?$")
_NOTE_ABOVE = 8  # comment lines above a commented-out definition read for its note
_BODY_LINES = 200  # lines of a commented-out function body read for its note
# An entry of an explicit suite list: SGLang's `TestFile("test/srt/test_x.py", 60)`.
_SUITE_ENTRY_RE = re.compile(r"^TestFile\(")
_QUOTED_RE = re.compile(r"[\"']([^\"'\n]+)[\"']")
_ENTRY_LINES = 12  # lines of one commented-out suite entry read for its path and arguments
_LIST_FILE_RE = re.compile(r"(?:models|tests|suites?|configs?)[\w.-]*\.txt$", re.I)


def shell_function_call(view: SilencingView, code: str) -> bool:
    """`run_gsm8k_test` (with or without arguments) where the script defines that
    function: a call of one of its tests."""
    match = _FUNC_CALL_RE.match(code)
    if match is None:
        return False
    name = re.escape(match.group(1))
    text = view.changed.base_text
    if text is None:  # patch only: the definition may be out of sight; trust a test name
        text = "\n".join(view.lines.values())
        if "test" in match.group(1).lower() and match.group(1) not in _SHELL_WORDS:
            return True
    return re.search(rf"^\s*(?:function\s+)?{name}\s*(?:\(\s*\)|\{{)", text, re.M) is not None


def tracked_at_definition(view: SilencingView, call: str) -> bool:
    """Whether the function `call` calls is commented out in the head with a tracking
    note: on the comment lines atop its definition, or anywhere in the commented-out
    body down to its closing `}`. One note where a test function is disabled covers the
    launcher's commented-out call of it."""
    match = _FUNC_CALL_RE.match(call)
    if match is None:
        return False
    definition = re.compile(rf"^\s*#[#\s]*(?:function\s+)?{re.escape(match.group(1))}"
                            rf"\s*(?:\(\s*\)\s*)?\{{")
    lines = view.lines
    at = next((m for m, text in lines.items() if definition.match(text[:MAX_LINE])), None)
    if at is None:
        return False
    span: list[int] = []
    for m in range(at - 1, at - 1 - _NOTE_ABOVE, -1):  # the note atop the block
        if not (lines.get(m) or "").lstrip().startswith("#"):
            break
        span.append(m)
    for m in range(at, at + _BODY_LINES):  # the commented-out body, to its `}`
        text = (lines.get(m) or "").strip()
        if not text.startswith("#"):
            break
        span.append(m)
        if text.lstrip("#").strip() == "}":
            break
    return any(tracked(lines[m][:MAX_LINE]) for m in span)


_PARAM_RE = re.compile(r"\$\{[^{}\n]*\}")  # `${VAR}` opens no block
_SCAN = 300  # lines walked up to the enclosing function's definition
# What a note in a test function says when it explains why its tests are off ("Test
# cases are commented because of PR27772", "disabled until #123", "broken upstream, see
# #5"), not a remark on one of its live commands ("Slow, see #26715").
_OFF_NOTE_RE = re.compile(r"\bcomment(?:s|ed|ing)?\b|\bdisabl\w*|\bskip\w*|\bturn(?:s|ed)? off\b|"
                          r"\bbecause of\b|\bdue to\b|\bblocked\b", re.I)


def _braces(text: str) -> int:
    code = _PARAM_RE.sub("", code_part(text))
    return code.count("{") - code.count("}")


def _function_span(view: SilencingView, n: int) -> tuple[int, int] | None:
    """The first and last known line of the shell function whose body holds line n."""
    balance, start = 0, None
    for m in range(n - 1, max(0, n - _SCAN), -1):
        text = view.get(m)
        if text is None:
            return None  # out of sight: the patch does not show the definition
        balance += _braces(text)
        if balance >= 1 and _FUNC_DEF_RE.match(text.strip()):
            start = m
            break
    if start is None:
        return None
    balance, end = 0, start
    for m in range(start, start + _BODY_LINES):
        text = view.get(m)
        if text is None:
            break
        balance, end = balance + _braces(text), m
        if m > start and balance <= 0:
            break
    return start, end


def tracked_in_function(view: SilencingView, n: int) -> bool:
    """A tracking note anywhere in the shell function that holds line n — above or below
    it, at the function's end or atop its definition — saying why its tests are off.
    One note where a function's tests are commented out covers each of them."""
    span = _function_span(view, n)
    if span is None:
        return False
    top, end = span
    while span[0] - top < _NOTE_ABOVE and (view.get(top - 1) or "").lstrip().startswith("#"):
        top -= 1
    for m in range(top, end + 1):
        text = view.get(m) or ""
        if m != n and text.lstrip().startswith("#") and tracked(text) and (
                _OFF_NOTE_RE.search(text) or SILENCE_REASON_RE.search(text)):
            return True
    return False


def shell_function_definition(code: str) -> str | None:
    """The name of a shell function a line defines (`run_x_test() {`)."""
    match = _FUNC_DEF_RE.match(code)
    return match.group(1) if match else None


def _suite_entry(view: SilencingView, n: int, code: str) -> Hit:
    """A suite entry (`TestFile("test_x.py", 1)`) commented out: one test file CI stops
    running, a finding of its own (as a commented-out command is), named by the whole
    entry when it spreads over the commented-out lines below, which it spans."""
    parts, end, depth = [code], n, code.count("(") - code.count(")")
    while depth > 0 and end - n < _ENTRY_LINES:
        text = (view.get(end + 1) or "").strip()
        if not text.startswith("#"):
            break
        end += 1
        parts.append(text.lstrip("#").strip())
        depth += parts[-1].count("(") - parts[-1].count(")")
    entry = re.sub(r"\(\s+", "(", re.sub(r",?\s+\)", ")", " ".join(parts)))
    path = _QUOTED_RE.search(entry)
    cut = max(80, path.end() if path else 0)  # the path whole, however long
    shown = entry if len(entry) <= cut else entry[:cut].rstrip(", ")
    return Hit(n, f"`{shown}`", NOT_RUN, path.group(1) if path else shown, end=end,
               verb="commented out", alone=True)


def commented_hit(view: SilencingView, n: int, text: str, suffix: str) -> Hit | None:
    """A test or test line commented out; `suffix` is `.py`, `.txt`, `.yaml` (any YAML),
    `.sh` (CI shell) or ""."""
    if view.changed.status == "added":
        return None  # a brand-new file: nothing it comments out ever ran
    match = _COMMENTED_TEST_RE.match(text) if suffix == ".py" else None
    if match:
        name = next(g for g in match.groups() if g)
        label = f"test `{name}`" if name.startswith(("test", "Test")) else f"`{name}`"
        return Hit(n, label, NOT_RUN, name, verb="commented out")
    code = text.strip().lstrip("#").strip()
    if suffix in (".yaml", ".sh") and printed(view.lines, n):
        return None  # printed for the log, not run: the real command follows
    if suffix in (".yaml", ".sh") and (cmd := command(code)) is not None:
        base, head = view.runs_of("base"), view.runs_of("head")
        silenced = silenced_targets(cmd, base, head) or dropped_invocation(cmd, base, head)
        if not silenced:
            return None  # the base did not run it, or the head still does
        if suffix == ".sh" and tracked_in_function(view, n):
            return None
        return Hit(n, f"`{clip(code)}`", NOT_RUN, silenced[0], verb="commented out", alone=True)
    if not code or not view.was_removed(n, code):
        return None  # only a removed line that comes back as a comment was disabled
    if suffix == ".sh" and (function := shell_function_definition(code)):
        if _function_span(view, n) is not None:
            return None  # a helper nested in a live function: its test lines judge it
        # A test function commented out whole: one finding for the block.
        return Hit(n, f"function `{function}`", NOT_RUN, function, verb="commented out")
    call = _ENV_PREFIX_RE.sub("", code, count=1)
    if suffix == ".sh" and (_SHELL_CALL_RE.match(call) or shell_function_call(view, call)):
        # In a CI test script every call is a check: an example run, a sub-script, one
        # of the script's test functions.
        if tracked_at_definition(view, call) or tracked_in_function(view, n):
            return None  # the note where the function is commented out tracks the call
        return Hit(n, f"`{clip(code)}`", NOT_RUN, code[:80], verb="commented out", alone=True)
    if suffix == ".py":
        if _SUITE_ENTRY_RE.match(code):
            return _suite_entry(view, n, code)
        if not _TEST_CODE_RE.match(code):
            if not ENTRY_RE.match(code):
                return None
            parent = view.parent(n, yaml=False)
            if parent is None and "test" not in code.lower():
                return None  # an entry of an unknown list: could be a skip list
            if parent is not None and skip_name(parent[0]):
                return None  # commenting out a skip-list entry re-enables the test
    elif suffix == ".yaml":
        parent = view.parent(n, yaml=True)
        if not _YAML_TEST_LINE_RE.search(code) or (parent and skip_name(parent[0])):
            return None
    elif suffix != ".txt" or not (view.changed.surface == "eval-config"
                                  or _LIST_FILE_RE.search(view.changed.path)):
        return None
    return Hit(n, f"`{clip(code)}`", NOT_RUN, code[:80], verb="commented out")
