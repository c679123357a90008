"""`ci-stability rules` and `ci-stability explain <id>`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from rules import ALL_RULES, RULES_BY_ID
from rules.base import Rule


def rule_table_markdown(rules: Sequence[Rule] = ALL_RULES) -> str:
    """The README's rule table, generated from the registry."""
    lines = ["| id | default severity | summary |", "|---|---|---|"]
    lines += [f"| `{r.id}` | {r.severity} | {type(r).summary()} |" for r in rules]
    return "\n".join(lines) + "\n"


def _list(fmt: str) -> str:
    if fmt == "json":
        data = [
            {"id": r.id, "severity": str(r.severity), "summary": type(r).summary(),
             "options": {k: list(v) if isinstance(v, tuple) else v for k, v in r.options.items()}}
            for r in ALL_RULES
        ]
        return json.dumps(data, indent=2) + "\n"
    if fmt == "markdown":
        return rule_table_markdown()
    width = max(len(r.id) for r in ALL_RULES)
    return "".join(
        f"{r.id:<{width}}  {r.severity!s:<7}  {type(r).summary()}\n" for r in ALL_RULES
    )


def main(argv: Sequence[str]) -> int:
    if argv and argv[0] == "explain":
        parser = argparse.ArgumentParser(prog="ci-stability explain")
        parser.add_argument("rule")
        args = parser.parse_args(argv[1:])
        rule = RULES_BY_ID.get(args.rule)
        if rule is None:
            sys.stderr.write(
                f"ci-stability explain: unknown rule {args.rule!r}; "
                f"known: {', '.join(RULES_BY_ID)}\n"
            )
            return 2
        options = "".join(f"\n  {k}: {v!r}" for k, v in rule.options.items())
        sys.stdout.write(
            f"{rule.id} (default severity: {rule.severity})\n\n{type(rule).docs()}\n"
            + (f"\nOptions (rules.{rule.id}.options in .github/ci-stability.yml):{options}\n"
               if options else "")
        )
        return 0
    parser = argparse.ArgumentParser(prog="ci-stability rules")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    args = parser.parse_args(argv)
    sys.stdout.write(_list(args.format))
    return 0
