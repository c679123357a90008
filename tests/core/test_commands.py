from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

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


# --- GitHub's rendering decides (bot/app/visible.py) -------------------------------------
WAIVE = "/stability ignore silenced-test -- hidden"
HIDING = {
    "backtick fence": f"```\n{WAIVE}\n```",
    "tilde fence": f"~~~\n{WAIVE}\n~~~",
    "nested fences": f"````md\n```\n{WAIVE}\n```\n````",
    "tilde inside backtick fence": f"```\n~~~\n{WAIVE}\n~~~\n```",
    "backtick inside tilde fence": f"~~~\n```\n```\n{WAIVE}\n~~~",
    "unclosed fence": f"```\ntext\n\n{WAIVE}",
    "indented code": f"para\n\n    {WAIVE}",
    "html comment": f"<!--\n{WAIVE}\n-->",
    "inline html comment": f"hello <!--\n{WAIVE}\n-->",
    "pre": f"<pre>\n{WAIVE}\n</pre>",
    "pre after blank lines": f"<pre>\n\n{WAIVE}\n\n</pre>",
    "block quote": f"> {WAIVE}",
    "lazy quote continuation": f"> quoted\n{WAIVE}",
    "details": f"<details>\n<summary>x</summary>\n\n{WAIVE}\n\n</details>",
    "nested details": f"<details>\n\n<details>\n\n</details>\n\n{WAIVE}\n\n</details>",
    "html blockquote": f"<blockquote>\n\n{WAIVE}\n\n</blockquote>",
    "list item": f"- {WAIVE}",
    "code span": f"`{WAIVE}`",
    "multi-line code span": f"``x\n{WAIVE}\n``",
    "heading": f"# {WAIVE}",
}


def test_commands_github_renders_as_code_or_hides_do_not_run() -> None:
    for name, body in HIDING.items():
        assert parse(body) == [], name


def test_a_command_after_the_hiding_block_still_runs() -> None:
    for name, body in HIDING.items():
        if name == "unclosed fence" or name == "lazy quote continuation":
            continue
        found = parse(f"{body}\n\n/stability review\n")
        assert found == [("review", None, None, None, None)], name


def test_arguments_keep_their_raw_text() -> None:
    ((name, rule, path, reason, error),) = parse(
        "/stability ignore silenced-test tests/__init__.py -- *because* <b>x</b>")
    assert (name, rule, path, error) == ("ignore", "silenced-test", "tests/__init__.py", None)
    assert reason == "*because* <b>x</b>"


def test_continuation_lines_of_a_paragraph_count() -> None:
    assert [c[0] for c in parse("Thanks!\n/stability help\n/stability runs")] == ["help", "runs"]


def test_unknown_names_are_quoted_inertly() -> None:
    ((*_, error),) = parse("/stability <!--ci-stability:summary-->@octocat")
    assert error is not None and "<!--" not in error and "@octocat" in error


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
_HIDE = st.sampled_from([
    lambda c: f"```\n{c}\n```", lambda c: f"~~~~\n```\n{c}\n~~~~", lambda c: f"> {c}",
    lambda c: f"<!-- {c} -->", lambda c: f"<pre>\n{c}\n</pre>", lambda c: f"    {c}",
    lambda c: f"<details>\n\n{c}\n\n</details>",
])


@settings(max_examples=150, deadline=None)
@given(before=_TEXT, hide=_HIDE)
def test_property_hidden_commands_never_run(before: str, hide: Any) -> None:
    # Whatever text comes first, once it is closed off by a blank line a hidden command
    # stays hidden (text that opens a fence or comment would hide it anyway).
    body = f"{before.replace(chr(96), '').replace('~', '').replace('<', '')}\n\n{hide(WAIVE)}"
    assert all(c.name != "ignore" for c in parse_commands(body, RULES_BY_ID))


@settings(max_examples=150, deadline=None)
@given(body=st.text(max_size=300))
def test_property_parsing_any_text_never_crashes(body: str) -> None:
    commands = parse_commands(body, RULES_BY_ID)
    assert len(commands) <= 5
    assert all(c.raw.startswith("/stability") for c in commands)


def test_pathological_bodies_are_bounded_and_still_find_short_commands() -> None:
    # Thousands of `[` make inline parsing quadratic: such a paragraph is not parsed,
    # and a command in a short paragraph of its own still runs.
    assert parse("/stability help\n" + "[" * 60_000) == []
    assert [c[0] for c in parse("[" * 60_000 + "\n\n/stability help")] == ["help"]
    assert [c[0] for c in parse("/stability help\n\n" + "[" * 60_000)] == ["help"]
