"""`ci-stability eval`: precision and recall of the rules on a labeled corpus of real PRs.

`--logs DIR` scores the log extractor on a corpus of CI-log excerpts instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bot.cli.common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, UsageError, select_rules
from bot.core.config import Config
from bot.core.engine import review
from bot.evaluation.corpus import Case, CorpusError, load_cases
from bot.evaluation.logs import main as eval_logs
from bot.evaluation.report import render
from bot.evaluation.score import Scores, score_case
from bot.sources import SourceError
from bot.sources.prjson import snapshot_from_pr_data

DEFAULT_CORPUS = Path("eval/prs")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ci-stability eval", description=__doc__)
    parser.add_argument("--corpus", metavar="DIR", type=Path, default=DEFAULT_CORPUS,
                        help=f"labeled PR cases (default: {DEFAULT_CORPUS})")
    parser.add_argument("--rule", metavar="ID[,ID…]", help="score only these rules")
    parser.add_argument("--split", choices=("all", "dev", "holdout"), default="all",
                        help="dev: the cases rules were tuned on; holdout: the 30 %% kept out")
    parser.add_argument("--repo", metavar="OWNER/NAME", help="only this repository's cases")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    parser.add_argument("--min-precision", type=float, metavar="P",
                        help="exit 1 when overall precision is below P")
    parser.add_argument("--min-recall", type=float, metavar="R",
                        help="exit 1 when overall recall is below R")
    parser.add_argument("--logs", metavar="DIR", type=Path,
                        help="score the log extractor on this log corpus instead")
    return parser


def evaluate(cases: Sequence[Case], rule_ids: Sequence[str] | None = None) -> Scores:
    """Run the engine on every case and score its findings against the labels."""
    rules = select_rules(",".join(rule_ids) if rule_ids else None)
    ids = [r.id for r in rules]
    scores = Scores()
    for case in cases:
        try:
            snapshot = snapshot_from_pr_data(case.pr)
        except SourceError as exc:
            raise CorpusError(f"{case.id}: {exc}") from None
        report = review(snapshot, Config(), rules)
        scores.cases += 1
        scores.ordinary_cases += case.sample == "ordinary"
        scores.outcomes += score_case(case, report.findings, ids)
    return scores


def main(argv: Sequence[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    if args.logs is not None:
        return eval_logs(args)
    try:
        rule_ids = [r.id for r in select_rules(args.rule)]
        cases = [c for c in load_cases(args.corpus)
                 if (args.split == "all" or c.split == args.split)
                 and (args.repo is None or c.repo == args.repo)]
        scores = evaluate(cases, rule_ids)
    except (UsageError, CorpusError) as exc:
        sys.stderr.write(f"ci-stability eval: {exc}\n")
        return EXIT_USAGE
    repos = sorted({c.repo for c in cases})
    sys.stdout.write(render(scores, rule_ids, repos, args.format))
    overall = scores.tally()
    below = ((args.min_precision is not None and (overall.precision or 0.0) < args.min_precision)
             or (args.min_recall is not None and (overall.recall or 0.0) < args.min_recall))
    return EXIT_FINDINGS if below else EXIT_OK
