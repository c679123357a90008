"""`ci-stability eval --logs DIR`: root-cause line and category accuracy on a log corpus.

The corpus is a folder of `.log` excerpts and an `index.json` whose entries name each
file's expected root-cause line (plus acceptable alternatives) and category, in the
format of `eval/ci-logs/` and `tests/data/ci-logs/`.

`--split dev|holdout` scores a fixed part of the corpus: an excerpt is held out when
the SHA-256 of its file name, read as a number, falls in the lowest 30 % — a rule that
needs no labels, so excerpts added later fall on a side without anyone choosing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.evidence.extract import RootCause, extract_file

EXIT_OK, EXIT_BELOW, EXIT_USAGE = 0, 1, 2
HOLDOUT_PERCENT = 30


def split_of(file: str) -> str:
    """"holdout" for about 30 % of file names, "dev" for the rest; fixed by the name alone."""
    digest = int.from_bytes(hashlib.sha256(file.encode("utf-8")).digest()[:8], "big")
    return "holdout" if digest % 100 < HOLDOUT_PERCENT else "dev"


@dataclass(frozen=True)
class LogOutcome:
    file: str
    expected_lines: tuple[int, ...]
    expected_category: str
    got_line: int | None
    got_category: str | None

    @property
    def line_ok(self) -> bool:
        return self.got_line in self.expected_lines

    @property
    def category_ok(self) -> bool:
        return self.got_category == self.expected_category


def _entries(root: Path) -> list[dict[str, Any]]:
    index = root / "index.json"
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{index}: cannot read: {exc}") from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{index}: expected an object with an `entries` list")
    return entries


def score_logs(root: Path, split: str = "all") -> list[LogOutcome]:
    out: list[LogOutcome] = []
    for entry in _entries(root):
        if split != "all" and split_of(str(entry["file"])) != split:
            continue
        expected = entry["expected_root_cause"]
        lines = (int(expected["line_number"]),
                 *(int(n) for n in expected.get("also_acceptable_line_numbers") or ()))
        result = extract_file(str(root / entry["file"]))
        got_line = result.line_no if isinstance(result, RootCause) else None
        got_category = result.category if isinstance(result, RootCause) else None
        out.append(LogOutcome(entry["file"], lines, str(entry["category"]), got_line,
                              got_category))
    return out


def _ratio(n: int, total: int) -> str:
    return f"{n}/{total} ({n / total:.2f})" if total else "0/0"


def render(outcomes: Sequence[LogOutcome], fmt: str) -> str:
    lines_ok = sum(o.line_ok for o in outcomes)
    cats_ok = sum(o.category_ok for o in outcomes)
    if fmt == "json":
        return json.dumps({
            "excerpts": len(outcomes), "line_correct": lines_ok, "category_correct": cats_ok,
            "misses": [o.__dict__ for o in outcomes if not (o.line_ok and o.category_ok)],
        }, indent=2) + "\n"
    out = [f"{len(outcomes)} excerpts: root-cause line right on {_ratio(lines_ok, len(outcomes))}"
           f", category right on {_ratio(cats_ok, len(outcomes))}", ""]
    misses = [o for o in outcomes if not (o.line_ok and o.category_ok)]
    out.append(f"Misses ({len(misses)})")
    for o in misses:
        what = []
        if not o.line_ok:
            what.append(f"line {o.got_line} (expected {', '.join(map(str, o.expected_lines))})")
        if not o.category_ok:
            what.append(f"category {o.got_category} (expected {o.expected_category})")
        out.append(f"  {o.file}: " + "; ".join(what))
    return "\n".join(out) + "\n"


def main(args: argparse.Namespace) -> int:
    try:
        outcomes = score_logs(args.logs, getattr(args, "split", "all"))
    except (ValueError, KeyError, OSError) as exc:
        sys.stderr.write(f"ci-stability eval --logs: {exc}\n")
        return EXIT_USAGE
    sys.stdout.write(render(outcomes, "json" if args.format == "json" else "text"))
    total = len(outcomes) or 1
    lines = sum(o.line_ok for o in outcomes) / total
    below = ((args.min_precision is not None and lines < args.min_precision)
             or (args.min_recall is not None and lines < args.min_recall))
    return EXIT_BELOW if below else EXIT_OK
