"""`python -m bot.cli.readme`: regenerate the README's generated tables (`make readme`).

Two tables are generated, never hand-edited: the rule table from the registry and
the precision/recall tables from `ci-stability eval` on `eval/prs/` (a test checks
both are current).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bot.cli.eval import DEFAULT_CORPUS, evaluate
from bot.cli.rules import rule_table_markdown
from bot.evaluation.corpus import load_cases
from bot.evaluation.report import tables_markdown
from rules import ALL_RULES

RULES = ("<!-- rules-table:start -->", "<!-- rules-table:end -->")
EVAL = ("<!-- eval-table:start -->", "<!-- eval-table:end -->")


def eval_tables(corpus: Path = DEFAULT_CORPUS) -> str:
    cases = list(load_cases(corpus))
    ids = [r.id for r in ALL_RULES]
    return tables_markdown(evaluate(cases, ids), ids, sorted({c.repo for c in cases}))


def between(text: str, markers: tuple[str, str]) -> str:
    start, end = markers
    return text[text.index(start) + len(start): text.index(end)]


def replace_between(text: str, markers: tuple[str, str], body: str) -> str:
    start, end = markers
    return text[: text.index(start) + len(start)] + "\n" + body + text[text.index(end):]


def main() -> int:
    readme = Path("README.md")
    text = readme.read_text(encoding="utf-8")
    text = replace_between(text, RULES, rule_table_markdown())
    text = replace_between(text, EVAL, eval_tables())
    readme.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
