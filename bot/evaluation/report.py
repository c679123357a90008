"""Tables of an evaluation: per rule, per repository, every FP and FN with its why."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.evaluation.score import Outcome, Scores, Tally


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _row(name: str, t: Tally) -> list[str]:
    return [name, str(t.tp), str(t.fp), str(t.fn), _pct(t.precision), _pct(t.recall)]


def _rows(scores: Scores, rules: Sequence[str], repos: Sequence[str]
          ) -> tuple[list[list[str]], list[list[str]]]:
    by_rule = [_row(r, scores.tally(rule=r)) for r in rules]
    by_rule.append(_row("all rules", scores.tally()))
    by_repo = [_row(r, scores.tally(repo=r)) for r in repos]
    return by_rule, by_repo


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt.format(*r) for r in [header, *rows])


HEADER = ("rule", "TP", "FP", "FN", "precision", "recall")


def summary_line(scores: Scores, repos: Sequence[str]) -> str:
    per20 = scores.false_per_20_ordinary()
    return (f"{scores.cases} cases from {len(repos)} repositories; on the "
            f"{scores.ordinary_cases} ordinary CI-surface changes: "
            f"{scores.tally(sample='ordinary').fp} false findings "
            f"({'—' if per20 is None else f'{per20:.2f}'} per 20 PRs)")


def tables_markdown(scores: Scores, rules: Sequence[str], repos: Sequence[str]) -> str:
    """The README's tables: per rule and per repository."""
    by_rule, by_repo = _rows(scores, rules, repos)
    return "\n\n".join([
        summary_line(scores, repos) + ".",
        _table(HEADER, by_rule, markdown=True),
        _table(("repository", *HEADER[1:]), by_repo, markdown=True),
    ]) + "\n"


def _listing(outcomes: Sequence[Outcome], kind: str, markdown: bool) -> list[str]:
    picked = [o for o in outcomes if o.kind == kind]
    title = {"fp": "False positives", "fn": "False negatives"}[kind]
    lines = [f"{'## ' if markdown else ''}{title} ({len(picked)})"]
    for o in sorted(picked, key=lambda o: (o.rule, o.case, o.path or "", o.line or 0)):
        where = f"{o.path}:{o.line}" if o.path and o.line else (o.path or "(PR)")
        text = o.text if kind == "fp" else ""
        why = f" — label: {o.why}" if o.why else ""
        lines.append(f"{'- ' if markdown else '  '}[{o.rule}] {o.case} {where}"
                     f"{': ' + text[:160] if text else ''}{why}")
    return lines


def render(scores: Scores, rules: Sequence[str], repos: Sequence[str], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(as_json(scores, rules, repos), indent=2) + "\n"
    markdown = fmt == "markdown"
    by_rule, by_repo = _rows(scores, rules, repos)
    parts = [summary_line(scores, repos), "",
             _table(HEADER, by_rule, markdown), "",
             _table(("repository", *HEADER[1:]), by_repo, markdown), ""]
    parts += [*_listing(scores.outcomes, "fp", markdown), ""]
    parts += _listing(scores.outcomes, "fn", markdown)
    return "\n".join(parts) + "\n"


def _tally_json(t: Tally) -> dict[str, Any]:
    return {"tp": t.tp, "fp": t.fp, "fn": t.fn, "precision": t.precision, "recall": t.recall}


def as_json(scores: Scores, rules: Sequence[str], repos: Sequence[str]) -> dict[str, Any]:
    return {
        "cases": scores.cases,
        "ordinary_cases": scores.ordinary_cases,
        "false_per_20_ordinary": scores.false_per_20_ordinary(),
        "overall": _tally_json(scores.tally()),
        "rules": {r: _tally_json(scores.tally(rule=r)) for r in rules},
        "repositories": {r: _tally_json(scores.tally(repo=r)) for r in repos},
        "outcomes": [o.__dict__ for o in scores.outcomes if o.kind != "tp"],
    }
