"""shard-matrix: shard ids that don't cover the shard count, and shard-count changes."""

from __future__ import annotations

import dataclasses
import re
import textwrap
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import (
    SHARD_SIZE_KEYS,
    KnobFilter,
    hunk_changes,
    knob_filter,
    normalize,
    number,
    shared_filter,
)
from rules.analysis.lines import MAX_LINE, SideLine, code_part, side_contains, sides
from rules.analysis.yamlscan import ITEM, YamlLine, is_yaml, scan
from rules.base import Rule, RuleContext
from rules.shard_matrix.shard_groups import (
    MAX_SHARDS,
    ShardOptions,
    parse_yaml,
    shard_groups,
    shard_problem,
)

_MAX_TEXT = 1_000_000  # larger files are judged from the patch alone
_MAX_BLOCK = 3_000  # lines of one matrix block
_FLOW_LIST_RE = re.compile(r"^\s*(?:-\s+)?([\"']?)([A-Za-z_][\w.-]*)\1\s*:\s*\[([^\[\]]*)\]$")
_FLOW_ENTRY_RE = re.compile(r"^\s*\{[^{}]*\}")
_MATRIX = frozenset({"matrix", "test-matrix"})
_NEUTRAL = frozenset({"blank", "comment"})
_KEY_RE = re.compile(r"([A-Za-z_][\w-]*)\s*:")


def _code(text: str) -> str:
    return code_part(text[:MAX_LINE]).rstrip()


class ShardMatrix(Rule):
    """A shard matrix that doesn't cover its shard count, or a change to shard counts.

    Why it destabilizes CI
    ----------------------
    Sharded suites (SGLang `part: [0, 1, 2]` with `--auto-partition-id/--auto-partition-size`,
    PyTorch `test-matrix` entries with `shard`/`num_shards`, Buildkite `parallelism`)
    only run every test when the shard ids cover `range(size)` exactly: a missing id
    silently drops a slice of the suite, a duplicate runs one twice. Changing the
    count is sometimes the fix (the SGLang Xeon CI went from 4 socket-pinned parts to 3
    full-machine shards because sglang sizes its KV pool from host memory, ignoring the
    cgroup limit), but it moves tests between shards, changes per-shard runtime against
    the job timeout, and needs runners for every shard, so it deserves a look.

    Flags
    -----
    Shard ids with gaps, duplicates or ids beyond the shard count (error), and changed
    shard counts: the length of a shard-id list, a shard-size flag or key, sharded
    `include` entries, Buildkite `parallelism` (notice, once per change). Build matrices
    (Python or CUDA versions, runners, models, suites) partition no tests and are not
    judged:
    ```yaml
    matrix:
      part: [0, 1, 2, 4]
    # ...
    run: python3 run_suite.py --auto-partition-id ${{ matrix.part }} --auto-partition-size 4
    ```

    Prefer
    ------
    Ids that cover the count exactly, with the count stated once:
    ```yaml
    matrix:
      part: [0, 1, 2, 3]
    # ...
    run: python3 run_suite.py --auto-partition-id ${{ matrix.part }} --auto-partition-size 4
    ```
    """

    id = "shard-matrix"
    severity = Severity.ERROR
    options: ClassVar[Mapping[str, Any]] = {
        "id_keys": ("part", "part-id", "shard", "shard-id", "shard-index", "partition",
                    "partition-id", "group"),
        "size_keys": SHARD_SIZE_KEYS,
        "one_based_keys": ("shard", "group"),
    }

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        sizes = frozenset(normalize(k) for k in ctx.option("size_keys"))
        flags = "|".join(re.escape(k).replace("\\-", "[-_]") for k in sorted(sizes))
        opts = ShardOptions(
            frozenset(normalize(k) for k in ctx.option("id_keys")), sizes,
            frozenset(normalize(k) for k in ctx.option("one_based_keys")),
            re.compile(rf"--(?:{flags})(?:=|\s+)[\"']?(\d+)\b") if flags else re.compile(r"(?!)"),
        )
        counted = knob_filter((*sizes, "parallelism"))
        union = shared_filter(ctx.config)
        for changed in ctx.files("workflow", "ci-config"):
            if not is_yaml(changed.path):
                continue
            views: dict[str, dict[int, YamlLine] | None] = {}  # whole base/head, on need
            yield from self._coverage(changed, opts, views)
            if changed.status not in ("added", "copied"):
                counts = [list(self._counts(changed, hunk, counted, union, views, opts))
                          for hunk in changed.hunks]
                yield from self._count_findings(changed, counts)

    def _coverage(
        self, changed: ChangedFile, opts: ShardOptions, views: dict[str, dict[int, YamlLine] | None]
    ) -> Iterator[Finding]:
        added = changed.added_line_numbers
        if not added:
            return
        head = changed.head_text
        if "matrix" not in (head if head is not None else "") and not any(
                "matrix" in line.text for h in changed.hunks for line in h.lines):
            segments: list[list[YamlLine]] = []  # only bare `part: [...]` lines can be judged
        elif (whole := _view(changed, "head", views)) is not None:
            segments = [list(whole.values())]
        else:
            segments = [scan(((n, t) for n, t, _ in sides(h)[1]), full=False,
                             section=h.section) for h in changed.hunks]
        complete = views.get("head") is not None
        known_size: list[int | None] = []

        def file_size() -> int | None:
            """The one shard count the file's commands pass, if any (read on need: most
            files have no shard ids to judge)."""
            if not known_size:
                visible = [y.text for seg in segments for y in seg] if segments else [
                    line.text for h in changed.hunks for line in h.lines
                    if line.new_no is not None]
                sizes = {int(m.group(1)) for t in visible if "--" in t
                         for m in opts.size_flag.finditer(_code(t))}
                known_size.append(next(iter(sizes)) if len(sizes) == 1 else None)
            return known_size[0]

        spans: list[tuple[int, int]] = []
        for seg in segments:
            for k, line in enumerate(seg):
                if line.kind != "key" or line.key not in _MATRIX:
                    continue
                path, end = line.full_path, k
                if line.value[:1] in ("{", "["):
                    body = line.value
                elif not line.value or line.opens is not None:
                    while end + 1 < len(seg) and (seg[end + 1].kind in _NEUTRAL
                                                  or seg[end + 1].path[: len(path)] == path):
                        end += 1
                    if (end + 1 == len(seg) and not complete) or end - k > _MAX_BLOCK:
                        continue  # the end of the block is not visible: ids may be missing
                    body = textwrap.dedent(
                        "\n".join(y.text[:MAX_LINE] for y in seg[k + 1 : end + 1]))
                else:
                    continue  # `${{ fromJSON(...) }}` and the like: nothing to check
                spans.append((line.number, seg[end].number))
                job, job_sizes = _job(seg, line, opts)
                touched = [y.number for y in seg[k : end + 1] if y.number in added]
                touched += [n for _, n in job_sizes if n in added]
                if not touched:
                    continue  # only changed matrices are judged
                counts = {c for c, _ in job_sizes}
                size = next(iter(counts)) if len(counts) == 1 else None if job else file_size()
                for key, ids, stated, label in shard_groups(parse_yaml(body), opts):
                    yield from self._report(changed, key, ids, stated if stated else size,
                                            min(touched), opts, job, label)
        for added_line in changed.added_lines:
            no, text = added_line.new_no or 0, added_line.text
            flow = _FLOW_LIST_RE.match(_code(text)) if "[" in text else None
            if flow is None or normalize(flow.group(2)) not in opts.ids or any(
                    a <= no <= b for a, b in spans):
                continue
            values = [number(v) for v in flow.group(3).split(",") if v.strip()]
            ids = [int(v) for v in values if v is not None and v == int(v)]
            if ids and len(ids) == len(values):
                yield from self._report(changed, flow.group(2), ids, file_size(), no, opts, "")

    def _report(self, changed: ChangedFile, key: str, ids: list[int], size: int | None,
                line: int, opts: ShardOptions, job: str, label: str = "") -> Iterator[Finding]:
        if not ids or (size is not None and not 0 < size <= MAX_SHARDS):
            return
        problem = shard_problem(key, ids, size, opts)
        if problem is None:
            return
        where = (f" of job `{job}`" if job else "") + (f" ({label})" if label else "")
        count = f" for {size} shards" if size is not None else ""
        yield self.finding(
            f"Shard ids `{key}` = {ids}{where} don't cover the shards exactly{count}: "
            f"{problem}. A missing shard's tests never run and a duplicate runs twice.",
            file=changed, line=line, key=f"cover|{job}|{label}|{key}|{sorted(ids)}|{size}",
        )

    def _counts(
        self, changed: ChangedFile, hunk: Hunk, counted: KnobFilter, union: KnobFilter,
        views: dict[str, dict[int, YamlLine] | None], opts: ShardOptions,
    ) -> Iterator[_Count]:
        """Changed shard counts in one hunk: size knobs, id lists, sharded include entries."""
        for change in hunk_changes(changed, hunk, union):
            s = change.setting
            old, new = (number(c.value) if c else None for c in (change.old, change.new))
            numeric = all(c is None or v is not None
                          for c, v in ((change.old, old), (change.new, new)))
            pairless = change.old is None or change.new is None
            if counted(s.name) and numeric and change.is_change and (
                    not pairless or s.name == "parallelism"):
                line = change.new.line if change.new else 0
                yield _Count(change.describe(), line, _job_at(changed, line, views),
                             (old, new) if s.name in opts.sizes else None)
        lists: dict[str, list[int]] = {}
        deltas: Counter[str] = Counter()
        first: dict[str, int] = {}
        for side, which, sign in zip(sides(hunk), ("base", "head"), (-1, 1), strict=True):
            if not _mentions_matrix(changed, which, hunk, side):
                continue  # no line of this side can sit under a `matrix:` key
            candidates = [(no, _code(text)) for no, text, is_changed in side if is_changed and (
                "[" in text or text.lstrip().startswith(("-", "{")))]
            if not candidates:
                continue
            known = _view(changed, which, views) or {
                y.number: y for y in scan(((n, t) for n, t, _ in side), full=False,
                                          section=hunk.section)}
            for no, code in candidates:
                line = known.get(no)
                if line is None or not _MATRIX & set(line.path):
                    continue
                flow = _FLOW_LIST_RE.match(code) if line.kind == "key" else None
                if flow:
                    if normalize(flow.group(2)) not in opts.ids:
                        continue  # python versions, runners, models: not a partition
                    count = len([v for v in flow.group(3).split(",") if v.strip()])
                    lists.setdefault(flow.group(2), [-1, -1])[sign > 0] = count
                    parent = flow.group(2)
                elif line.item and line.path[-1:] == (ITEM,) and len(line.path) > 1:
                    parent = line.path[-2]  # `- runner: …` under `include:`, `- 3` under `part:`
                    if normalize(parent) not in opts.ids and not _sharded_entry(known, line, opts):
                        continue
                elif line.kind == "block" and _FLOW_ENTRY_RE.match(code):
                    parent = line.path[-1]  # a `{ config: …, shard: 1 }` test-matrix entry
                    if not _shard_keys(code, opts):
                        continue
                else:
                    continue
                if not flow:
                    deltas[parent] += sign
                if sign > 0:
                    first.setdefault(parent, no)
        for key, (old, new) in lists.items():
            if old >= 0 and new >= 0 and old != new:
                line = first.get(key, 0)
                yield _Count(f"{key} {old} → {new} values", line, _job_at(changed, line, views),
                             None, (old, new))
        for key, delta in deltas.items():
            if delta:
                noun = "entry" if abs(delta) == 1 else "entries"
                line = first.get(key, 0)
                yield _Count(f"{key} {delta:+d} {noun}", line, _job_at(changed, line, views))

    def _count_findings(self, changed: ChangedFile, counts: list[list[_Count]]) -> \
            Iterator[Finding]:
        """One notice per change: a shard-count knob that moves together with the id list
        it sizes (`part: [0, 1]` and `--auto-partition-size 2`) is one change, not two."""
        lists = [(c, g) for g, group in enumerate(counts) for c in group if c.ids]
        groups: list[list[_Count]] = [[] for _ in counts]
        for g, group in enumerate(counts):
            for count in group:
                home = next((h for c, h in lists if count.size and c.ids == count.size
                             and c.job == count.job), g)
                groups[home].append(count if home == g else dataclasses.replace(count, line=0))
        for group in groups:
            items = dict.fromkeys(c.what for c in group)
            if not items:
                continue
            lines = [c.line for c in group if c.line]
            yield self.finding(
                f"Shard matrix changed: {'; '.join(items)}. Tests move between shards and "
                "per-shard runtime changes: check the job timeout and that a runner exists "
                "for every shard.",
                file=changed, line=min(lines) if lines else None, severity=Severity.NOTICE,
                key="counts|" + ";".join(sorted(items)),
            )


@dataclasses.dataclass(frozen=True)
class _Count:
    """One changed shard count: its description, line, job and (old, new) sizes."""

    what: str
    line: int
    job: str
    size: tuple[float | None, float | None] | None = None  # a size knob's old → new
    ids: tuple[float | None, float | None] | None = None  # an id list's old → new length


def _shard_keys(text: str, opts: ShardOptions) -> bool:
    return any(normalize(k) in opts.ids or normalize(k) in opts.sizes
               for k in _KEY_RE.findall(text))


def _sharded_entry(known: dict[int, YamlLine], line: YamlLine, opts: ShardOptions) -> bool:
    """Whether a matrix include/exclude entry starting at `line` carries a shard key."""
    if _shard_keys(line.text, opts):
        return True
    for n in range(line.number + 1, line.number + 40):
        other = known.get(n)
        if other is None or (other.kind not in _NEUTRAL and (
                other.item or other.path[: len(line.path)] != line.path)):
            return False
        if other.kind == "key" and other.key is not None and _shard_keys(f"{other.key}:", opts):
            return True
    return False


def _job_at(changed: ChangedFile, line: int,
            views: dict[str, dict[int, YamlLine] | None]) -> str:
    """The job (key under `jobs:`) of a head line, when the head text is known."""
    whole = _view(changed, "head", views) if line else None
    found = whole.get(line) if whole else None
    if found is None or found.path[:1] != ("jobs",) or len(found.full_path) < 2:
        return ""
    return found.full_path[1]


def _job(
    seg: list[YamlLine], line: YamlLine, opts: ShardOptions
) -> tuple[str, list[tuple[int, int]]]:
    """The job around a matrix (the key under `jobs:`) and the shard counts its commands
    pass (`--auto-partition-size 4`), with their lines; the whole view when unknown."""
    job = line.path[1] if line.path[:1] == ("jobs",) and len(line.path) > 1 else ""
    scope = [y for y in seg if y.path[:2] == ("jobs", job)] if job else seg
    return job, [(int(m.group(1)), y.number) for y in scope if "--" in y.text
                 for m in opts.size_flag.finditer(_code(y.text))]


def _mentions_matrix(changed: ChangedFile, which: str, hunk: Hunk, side: list[SideLine]) -> bool:
    """Whether `matrix` occurs where a side's key paths come from: the whole text of
    that side when known, else the hunk's lines and its `@@` section line."""
    text = changed.base_text if which == "base" else changed.head_text
    return ("matrix" in hunk.section or (text is not None and "matrix" in text)
            or side_contains(side, "matrix"))


def _view(
    changed: ChangedFile, which: str, views: dict[str, dict[int, YamlLine] | None]
) -> dict[int, YamlLine] | None:
    """The whole base or head text scanned, when known and not too large."""
    if which not in views:
        text = changed.base_text if which == "base" else changed.head_text
        ok = text is not None and 0 < len(text) <= _MAX_TEXT
        views[which] = {y.number: y for y in scan(enumerate(text.splitlines(), 1))} \
            if ok and text else None
    return views[which]
