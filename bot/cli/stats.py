"""`ci-stability stats`: the users' own verdicts on each rule, from the App's store.

Per repository and rule: findings open on PRs now (from the published PR states),
misfires recorded with `/stability misfire` and waivers from `/stability ignore`.
Misfires per finding is the precision in production that the eval corpus can only
estimate.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bot.cli.exits import EXIT_OK, EXIT_USAGE
from bot.github.pr_state import PrState
from bot.store import DB_ERRORS, SqlStore, StoreError, is_postgres_url, open_store, redacted_url

_OPEN_ERRORS: tuple[type[Exception], ...] = (StoreError, *DB_ERRORS)
_FIELDS = ("findings", "misfires", "misfires_prs", "waivers", "waivers_prs")


def _open_findings(store: SqlStore) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for repo, text in store.db.execute("SELECT repo, state FROM pr_state").fetchall():
        try:
            state = PrState.from_dict(json.loads(text))
        except ValueError:
            continue  # a damaged row: stats are best effort, the App rebuilds it
        for known in state.open.values():
            counts[(str(repo), known.rule)] += 1
    return counts


def collect(store: SqlStore) -> list[dict[str, object]]:
    rows: dict[tuple[str, str], dict[str, int]] = {}
    for key, count in _open_findings(store).items():
        rows.setdefault(key, {})["findings"] = count
    for key, counts in store.verdict_counts().items():
        rows.setdefault(key, {}).update(counts)
    return [{"repo": repo, "rule": rule, **{f: rows[(repo, rule)].get(f, 0) for f in _FIELDS}}
            for repo, rule in sorted(rows)]


def _text(rows: list[dict[str, object]]) -> str:
    if not rows:
        return "no findings, misfires or waivers recorded yet\n"
    header = f"{'repository':<32} {'rule':<28} {'findings':>8} {'misfires':>8} {'waivers':>8}"
    lines = [header, "-" * len(header)]
    lines += [f"{str(r['repo'])[:32]:<32} {str(r['rule'])[:28]:<28} {r['findings']:>8} "
              f"{r['misfires']:>8} {r['waivers']:>8}" for r in rows]
    by_rule: Counter[str] = Counter()
    for r in rows:
        by_rule[str(r["rule"])] += int(str(r["misfires"]))
    lines += ["", "misfires by rule: " + (", ".join(
        f"{rule} {count}" for rule, count in by_rule.most_common() if count) or "none")]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="ci-stability stats", description=__doc__)
    parser.add_argument("--db", default=os.environ.get("CI_STABILITY_DB", "ci-stability.db"),
                        help="the App's database: a SQLite path or a postgresql:// URL "
                             "(default: $CI_STABILITY_DB, else ./ci-stability.db)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    if not is_postgres_url(args.db) and not Path(args.db).is_file():
        sys.stderr.write(f"ci-stability stats: no database at {args.db}\n")
        return EXIT_USAGE
    try:
        store = open_store(args.db)
    except _OPEN_ERRORS as exc:
        sys.stderr.write(f"ci-stability stats: cannot open {redacted_url(args.db)}: {exc}\n")
        return EXIT_USAGE
    try:
        rows = collect(store)
    finally:
        store.close()
    sys.stdout.write(json.dumps(rows, indent=2) + "\n" if args.format == "json" else _text(rows))
    return EXIT_OK
