"""silenced-test's detectors: what each kind of file (Python, YAML, command lines,
commented-out code) looks like when a change silences a test instead of fixing it.

The rule itself (`rules.silenced_test`) walks the added lines and decides which hits
become findings; these only recognise the silencing on one line and describe it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from rules.analysis.lines import code_part, indent_width
from rules.silenced_test.backends import platforms_named
from rules.silenced_test.base_tests import added_case, added_test
from rules.silenced_test.gates import call_text, kept_gate, unconditional, widened, zero_reruns
from rules.silenced_test.kept_markers import not_a_silencing
from rules.silenced_test.line_structure import ARG_HINTS, IGNORE_ARG_RE, YAML_KEY_RE, SilencingView
from rules.silenced_test.skip_names import skip_name
from rules.silenced_test.steps import in_env, silences_a_test_step, test_entry
from rules.silenced_test.test_lists import test_list_entry

NOT_RUN = "so the test no longer runs in CI"
_RERUN = "so failures are retried until they pass and the flakiness stays hidden"
_UNSEEN = "fail without failing the {} and the failure goes unnoticed instead of being fixed"

_MARKER_RE = re.compile(
    r"@?pytest\.mark\.(?:skip|skipif|xfail|flaky)\b|@?unittest\.(?:skip\w*|expectedFailure)\b"
    r"|^\s*@(?:[\w.]+\.)?(?:skip\w*|xfail\w*|expected_?[Ff]ailure\w*|flaky\w*|retry\w*|"
    r"requires?_\w+)\b"
    r"|\bpytest\.(?:skip|xfail)\s*\(|\bskipTest\s*\(|\braise\s+(?:unittest\.)?SkipTest\b"
    r"|(?<![\w.])retry\s*\(|\bdisabled\s*=\s*(?!None\b|False\b)\S|(?<![\w.])skip\s*=\s*True\b"
)
_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)|^\s*class\s+(\w+)")
# Calls that define a test or CI suite entry: `disabled=…` on them turns the test off.
_REGISTER_RE = re.compile(r"\bregister_\w+_ci\b|\b\w*(?:Test|test|Suite|suite)\w*(?=\s*\()")
# Words that make a skip a silenced failure, not a capability gate (also on a new test-list
# entry, whose test may have run elsewhere).
SILENCE_REASON_RE = re.compile(
    r"flak\w*|\bfail\w*|broken|\bbreak\w*|\bhang\w*|time[ds]? ?out|\boom\b|out of memory|"
    r"crash\w*|segfault|todo|fixme|temporar\w*|investigat\w*|unstable|intermittent\w*|"
    r"nondetermin\w*|known issue|not working|does(?: not|n't) work|\bbug\b|\bfix\s?me\b|"
    r"\bfix (?:it )?later\b|to be fixed|needs? (?:a )?fix|\bfor now\b|not stable|"
    r"\bregress\w*|\bwrong\b|mismatch\w*|incorrect\w*|in progress|\bnot yet\b|\byet to\b|"
    r"\bwip\b|\buntil\b|enablement",
    re.I,
)
ENTRY_RE = re.compile(r"^(?:pytest\.param\(|[(\"'\[{])")
_PY_ASSIGN_RE = re.compile(r"^\s*(?P<name>[A-Za-z_][\w.]*)\s*(?::[^=\n]*)?\+?=\s*(?P<rest>.*)$")
_OPENS_RE = re.compile(r"(?:[\w.]+\()?[\[({]")
_PY_GROW_RE = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\.(?:append|add|extend|insert|update)\(")
_COLLECTION_RE = re.compile(r"(?:[\[({]|(?:list|set|tuple|frozenset|sorted)\()")
_STRING_RE = re.compile(r"\"([^\"\n]{1,300})\"|'([^'\n]{1,300})'")
_YAML_ITEM_RE = re.compile(r"^\s*-\s+(.*)$")
_FALSE_RE = re.compile(r"^(?:\$\{\{\s*)?[\"']?(?:false|no|off|null|~)?[\"']?(?:\s*\}\})?$", re.I)
_TRUE_RE = re.compile(r"^(?:\$\{\{\s*)?[\"']?(?:true|yes|on)[\"']?(?:\s*\}\})?$", re.I)
_IF_FALSE_RE = re.compile(r"^(?:\$\{\{\s*)?[\"']?false[\"']?\s*(?:\}\}|&&|$)", re.I)
_K_ARG_RE = re.compile(r"-k(?:=|\s+|[\"']\s*,\s*)[\"'](?P<expr>[^\"'\n]{1,2000})[\"']")
_NOT_TERM_RE = re.compile(r"\bnot\s+([\w\[\]./:-]+)")
_RERUNS_RE = re.compile(r"--reruns(?:=|\s+)(\d+)")


@dataclass(frozen=True)
class Hit:
    line: int
    what: str  # what was silenced, quoted in the message
    why: str  # what it does to CI
    subject: str = ""  # test/step name that a description may mention
    end: int = 0  # last line of the statement (issue links may sit there too)
    verb: str = "added"
    where: str = ""  # " on `test_x`", " to skip list `SKIPS`"
    medium: bool = False  # a heuristic call: summary only, no inline comment
    alone: bool = False  # a finding of its own even inside a commented-out block
    first: int = 0  # first line of a commented-out block
    soft: bool = False  # a soft-fail (the step still runs, its failure no longer gates)


def _strings(text: str) -> list[str]:
    return [a or b for a, b in _STRING_RE.findall(text)]


def _grows_test_list(view: SilencingView, grow: re.Match[str], text: str) -> bool:
    """`skips.append("test_x")`, not `disabled_cache.insert(key)` (a name assigned a non-list)."""
    name = re.escape(grow.group("name"))
    assigned = re.search(rf"^\s*{name}\s*(?::[^=\n]*)?=\s*(\S.*)$", view.text, re.M)
    if assigned is not None:
        return _COLLECTION_RE.match(assigned.group(1)) is not None
    return bool(_strings(text[grow.end():]))


def python_hits(view: SilencingView, n: int, text: str, stripped: str) -> Iterator[Hit]:
    lowered = text.lower() if view.hints else ""
    if any(hint in lowered for hint in view.hints):
        if marker := _MARKER_RE.search(text):
            found = marker.group(0).strip()
            kind = found.rstrip("(= ").split("=")[0].strip()
            yield from _marker_hit(view, n, text, kind + ("()" if found.endswith("(") else ""))
        grow = _PY_GROW_RE.search(text)
        if grow and skip_name(grow.group("name")) and _grows_test_list(view, grow, text):
            entries = ", ".join(_strings(text)[:3]) or stripped[:60]
            yield Hit(n, f"`{entries}`", NOT_RUN, entries,
                       where=f" to skip list `{grow.group('name')}`")
        assign = _PY_ASSIGN_RE.match(text)
        if assign and skip_name(assign.group("name")) and _OPENS_RE.match(assign.group("rest")):
            old = set(_strings(view.counterpart(n, text)))
            new = [s for s in _strings(assign.group("rest")) if s not in old]
            if new:
                yield Hit(n, f"`{', '.join(new[:3])}`", NOT_RUN, new[0],
                           where=f" to skip list `{assign.group('name')}`")
            return
    if view.skippy and ENTRY_RE.match(stripped) and (parent := view.parent(n, yaml=False)) \
            and skip_name(parent[0]):
        entry = (_strings(stripped) or [stripped[:60]])[0]
        yield Hit(n, f"`{entry}`", NOT_RUN, entry, where=f" to skip list `{parent[0]}`")


def _marker_hit(view: SilencingView, n: int, text: str, kind: str) -> Iterator[Hit]:
    stripped = text.strip()
    call = call_text(view, n, text)
    rerun = "flaky" in kind.lower() or "retry" in kind.lower()
    if rerun and zero_reruns(call):
        return  # `flaky(reruns=0)`: retries turned off
    old = view.counterpart(n, text)
    if not_a_silencing(view, n, stripped, old, kind, call, SILENCE_REASON_RE):
        return
    forced = unconditional(call) and not unconditional(old)
    widen = kind.rstrip("()") in old and not forced
    if widen and not widened(old, text):
        return  # an existing marker reworded, not a new silencing
    off_new_backend = bool(platforms_named(call) & view.backends)  # never ran there
    if not (rerun or forced or widen) and kept_gate(view, n, call, SILENCE_REASON_RE):
        return  # names what the test needs: runs wherever it can
    target: tuple[str, int] | None = None  # (name, line) of what the marker silences
    where, tested = "", False  # tested: on a test function, class or module (not an entry)
    if kind in ("disabled", "skip"):
        register = next((c for t in [text, *(t for _, t in islice(view.back(n), 6))]
                         if (c := _REGISTER_RE.search(t))), None)
        entry = None if register is not None else test_list_entry(view, n)
        if register is None and entry is None:
            return
        if entry is not None:
            kind, named = (f"{entry[0]}({kind}=…)" if entry[0] else f"{kind}=True"), [entry[1]]
        else:
            assert register is not None
            kind, named = f"{register.group(0)}({kind}=…)", _strings(text)
        target = ((named[0] if named and not kind.startswith("register_") else
                   view.changed.path.rsplit("/", 1)[-1].removesuffix(".py")), 0)
        where = f" on `{target[0]}`" if entry is not None else ""
    elif "pytest.param(" in text or "marks=" in text:
        if not rerun and added_case(view, n, text):
            return  # a case the PR adds, never run: nothing that ran stops running
        target, where = (stripped[:60], 0 if view.counterpart(n, text) else n), \
            f" on `{stripped[:60]}`"
    elif stripped.startswith("@"):
        tested = True
        for m in range(n + 1, n + 40):
            line = view.get(m)
            if line is None:
                break
            if match := _DEF_RE.match(line):
                target, where = (match.group(1) or match.group(2), m), " on "
                break
    elif stripped.startswith("pytestmark"):
        tested, where = True, " for the whole module"
    else:
        tested = True
        for m, line in view.back(n):
            if (match := _DEF_RE.match(line)) and indent_width(line) < indent_width(text):
                target, where = (match.group(1) or match.group(2), m), " in "
                break
    name = target[0] if target else ""
    where = f"{where}`{name}`" if where in (" on ", " in ") else where
    if rerun and not name.lower().startswith("test"):
        return  # retries around helpers (downloads, servers) are not test reruns
    end = target[1] - 1 if target and target[1] > n else n
    new = view.changed.status == "added" or bool(target and target[1] in view.added)
    # A test the PR adds: nothing that ran before stops running (reruns hide a new test's
    # flakiness from now on, so they stay). Others are judged as before.
    if tested and not (rerun or widen) and added_test(view, target, view.removed_defs):
        return
    span = " ".join(view.get(m) or "" for m in range(n - 1, max(end, n + 1) + 1))
    if new and not (forced or widen) and not SILENCE_REASON_RE.search(span):
        return  # a capability gate on a new test ("requires CUDA"), not a silenced failure
    gate = "xfail" in kind.lower() or "expected" in kind.lower()
    why = _RERUN if rerun else ("so the test no longer gates CI" if gate else NOT_RUN)
    verb = "made unconditional" if forced and kind.rstrip("()") in old else "added"
    if widen:
        verb, why = "widened", "so the test is skipped on a whole range of versions, not one"
    unsure = kind.endswith("=True")  # an entry whose call is outside the patch
    yield Hit(n, f"`{kind}`", why, name, end, where=where, verb=verb,
              medium=widen or unsure or off_new_backend)


def yaml_hits(view: SilencingView, n: int, text: str) -> Iterator[Hit]:
    lowered = text.lower() if view.hints else ""
    key = YAML_KEY_RE.match(text) if any(hint in lowered for hint in view.hints) else None
    if key:
        name, value = key.group("key"), code_part(key.group("val") or "").strip()
        norm = name.lower().replace("-", "_")
        falsy = bool(value) and bool(_FALSE_RE.match(value))
        parent = _parent_name(view, n)
        if norm == "continue_on_error" and _TRUE_RE.match(value) and \
                silences_a_test_step(view, n):
            yield Hit(n, "`continue-on-error: true`", "so the job can " + _UNSEEN.format(
                "workflow"), soft=True)
        elif norm == "if" and _IF_FALSE_RE.match(value):
            yield Hit(n, "`if: false`", "so the job or step no longer runs at all")
        elif norm == "soft_fail" and not falsy:
            statuses = value or ", ".join(_following(view, n, "exit_status"))
            yield Hit(n, f"Buildkite `soft_fail: {statuses or 'true'}`",
                       "so the step can " + _UNSEEN.format("build"), soft=True)
        elif norm == "automatic" and not falsy and _parent_name(view, n) in ("retry", None):
            detail = value or ", ".join(_following(view, n, "exit_status", "limit"))
            yield Hit(n, f"Buildkite automatic `retry` ({detail or 'any failure'})", _RERUN)
        elif in_env(parent, name):
            pass  # an environment variable whose name contains SKIP: a setting
        elif norm == "skip" and value and not falsy:
            yield Hit(n, f"Buildkite `skip: {value[:80]}`", "so the step no longer runs")
        elif re.fullmatch(r"(?:skip|disable)_?tests?", norm) and _TRUE_RE.match(value):
            yield Hit(n, f"`{name}: true`", NOT_RUN)
        elif norm in ("enabled", "disabled") and (falsy if norm == "enabled" else bool(
                _TRUE_RE.match(value))) and (entry := test_entry(view, n)):
            yield Hit(n, f"`{name}: {value}`", NOT_RUN, entry[:60].lstrip("- "),
                      where=f" on `{entry[:60].lstrip('- ')}`", medium=True)
        elif skip_name(name) and value and not (falsy or _TRUE_RE.match(value)) and \
                parent not in ("matrix", "with"):
            old = set(re.split(r"[\s,\[\]\"']+", view.counterpart(n, text).split(":", 1)[-1]))
            new = [s for s in re.split(r"[\s,\[\]\"']+", value) if s and s not in old]
            if new:
                yield Hit(n, f"`{', '.join(new[:3])}`", NOT_RUN, new[0], where=f" to `{name}`")
        if key.group("dash") is None:
            return
    item = _YAML_ITEM_RE.match(text) if view.skippy else None
    if item and (holder := view.parent(n, yaml=True)) and skip_name(holder[0]) and \
            _parent_name(view, holder[1]) not in ("matrix", "with"):  # shapes a matrix, inputs
        entry = code_part(item.group(1)).strip().strip("\"'")[:80]
        yield Hit(n, f"`{entry}`", NOT_RUN, entry, where=f" to `{holder[0]}`")


def _parent_name(view: SilencingView, n: int) -> str | None:
    parent = view.parent(n, yaml=True)
    return parent[0] if parent else None


def _following(view: SilencingView, n: int, *keys: str) -> list[str]:
    """`key value` of the listed keys in the block under line n (soft_fail/retry lists)."""
    base, out = indent_width(view.get(n) or ""), []
    for m in range(n + 1, n + 12):
        text = view.get(m)
        if text is None or (text.strip() and indent_width(text) <= base):
            break
        key = YAML_KEY_RE.match(text)
        if key and key.group("key") in keys:
            out.append(f"{key.group('key')} {code_part(key.group('val') or '').strip()}")
    return out


def arg_hits(view: SilencingView, n: int, text: str) -> Iterator[Hit]:
    if not view.args or not any(hint in text for hint in ARG_HINTS):
        return
    text = code_part(text)
    removed = f"{view.counterpart(n, text)}\n{view.replaced_command(n)}"  # re-wrapped too
    for match in IGNORE_ARG_RE.finditer(text):
        value, flag = match.group("v"), match.group("flag")
        if f"{flag}={value}" in removed or f"{flag} {value}" in removed:
            continue
        if (flag != "--deselect" and view.runs(value) > 0) or view.never_ran(text, value):
            continue  # split into its own command elsewhere, or the base never ran it
        yield Hit(n, f"`{flag}={value}`", NOT_RUN, value.rsplit("/", 1)[-1])
    old_terms = {t for m in _K_ARG_RE.finditer(removed) for t in _NOT_TERM_RE.findall(m["expr"])}
    for match in _K_ARG_RE.finditer(text):
        new = [t for t in _NOT_TERM_RE.findall(match.group("expr")) if t not in old_terms]
        if new:
            yield Hit(n, f"`-k \"not {new[0]}\"`",
                       "so the matching tests are deselected and no longer run in CI", new[0])
    old = [int(a) for a in _RERUNS_RE.findall(removed)]
    for match in _RERUNS_RE.finditer(text):
        count = int(match.group(1))
        if count > 0 and (not old or count > max(old)):
            yield Hit(n, f"`--reruns` ({max(old)} → {count})" if old else f"`--reruns {count}`",
                       _RERUN)
