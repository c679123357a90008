"""shard-matrix: shard ids that don't cover the shard count, and shard-count changes."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from operator import itemgetter
from typing import Any, ClassVar

from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import (
    SHARD_SIZE_KEYS,
    knob_filter,
    normalize,
    number,
    shared_filter,
)
from rules.analysis.lines import MAX_LINE, sides
from rules.analysis.yamlscan import YamlLine, is_yaml, scan
from rules.base import Rule, RuleContext
from rules.shard_matrix.count_changes import (
    MATRIX,
    NEUTRAL,
    Count,
    code_of,
    count_changes,
    merge,
    view,
)
from rules.shard_matrix.shard_groups import (
    MAX_SHARDS,
    ShardOptions,
    parse_yaml,
    shard_groups,
    shard_problem,
)

_MAX_BLOCK = 3_000  # lines of one matrix block
_FLOW_LIST_RE = re.compile(r"^\s*(?:-\s+)?([\"']?)([A-Za-z_][\w.-]*)\1\s*:\s*\[([^\[\]]*)\]$")
_TEXT = itemgetter(1)


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
                counts = [list(count_changes(changed, hunk, counted, union, views, opts))
                          for hunk in changed.hunks]
                yield from self._count_findings(changed, counts)

    def _coverage(
        self, changed: ChangedFile, opts: ShardOptions, views: dict[str, dict[int, YamlLine] | None]
    ) -> Iterator[Finding]:
        added = changed.added_line_numbers
        if not added:
            return
        head = changed.head_text
        # Each hunk's lines joined at C speed: the word holds no newline to match across.
        if "matrix" not in (head if head is not None else "") and not any(
                "matrix" in "\n".join(map(_TEXT, h.lines)) for h in changed.hunks):
            segments: list[list[YamlLine]] = []  # only bare `part: [...]` lines can be judged
        elif (whole := view(changed, "head", views)) is not None:
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
                         for m in opts.size_flag.finditer(code_of(t))}
                known_size.append(next(iter(sizes)) if len(sizes) == 1 else None)
            return known_size[0]

        spans: list[tuple[int, int]] = []
        for seg in segments:
            for k, line in enumerate(seg):
                if line.kind != "key" or line.key not in MATRIX:
                    continue
                path, end = line.full_path, k
                if line.value[:1] in ("{", "["):
                    body = line.value
                elif not line.value or line.opens is not None:
                    while end + 1 < len(seg) and (seg[end + 1].kind in NEUTRAL
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
            flow = _FLOW_LIST_RE.match(code_of(text)) if "[" in text else None
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

    def _count_findings(self, changed: ChangedFile, counts: list[list[Count]]) -> \
            Iterator[Finding]:
        for group in merge(counts):
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


def _job(
    seg: list[YamlLine], line: YamlLine, opts: ShardOptions
) -> tuple[str, list[tuple[int, int]]]:
    """The job around a matrix (the key under `jobs:`) and the shard counts its commands
    pass (`--auto-partition-size 4`), with their lines; the whole view when unknown."""
    job = line.path[1] if line.path[:1] == ("jobs",) and len(line.path) > 1 else ""
    scope = [y for y in seg if y.path[:2] == ("jobs", job)] if job else seg
    return job, [(int(m.group(1)), y.number) for y in scope if "--" in y.text
                 for m in opts.size_flag.finditer(code_of(y.text))]
