from __future__ import annotations

from bot.app.commands import parse_commands
from rules import RULES_BY_ID


def parse(body: str) -> list[tuple[str, str | None, str | None, str | None, str | None]]:
    return [(c.name, c.rule, c.path, c.reason, c.error)
            for c in parse_commands(body, RULES_BY_ID)]


def test_ignore_with_path_and_reason() -> None:
    assert parse("/stability ignore silenced-test tests/x.py -- tracked in #12") == [
        ("ignore", "silenced-test", "tests/x.py", "tracked in #12", None)
    ]


def test_ignore_without_reason_is_an_error() -> None:
    ((name, rule, _, _, error),) = parse("/stability ignore silenced-test")
    assert name == "ignore" and rule == "silenced-test" and error and "reason" in error


def test_only_line_start_counts_and_quotes_and_code_are_skipped() -> None:
    body = ("please run /stability review\n> /stability ignore dedup-note -- x\n"
            "```\n/stability ignore dedup-note -- y\n```\n  /stability review\n"
            "/stabilityreview\n/stability review\n")
    assert parse(body) == [("review", None, None, None, None)]


def test_unknown_subcommand_and_rule() -> None:
    assert parse("/stability frob")[0][4] == "unknown command `frob`"
    assert parse("/stability explain nope")[0][4] == "unknown rule `nope`"
    assert parse("/stability")[0][0] == "help"


def test_command_count_is_capped() -> None:
    assert len(parse("/stability help\n" * 50)) == 5
