"""What the CLI subcommands share: usage errors, exit codes, rule selection, output."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bot.cli.exits import EXIT_FINDINGS as EXIT_FINDINGS
from bot.cli.exits import EXIT_INTERNAL as EXIT_INTERNAL
from bot.cli.exits import EXIT_OK as EXIT_OK
from bot.cli.exits import EXIT_USAGE as EXIT_USAGE
from bot.cli.terminal import write_segments
from bot.core.config import Config
from bot.core.findings import Severity
from bot.core.limits import DEFAULT_LIMITS, HARD_MAX_BYTES, HARD_MAX_FILES, MIN_BYTES, ReviewLimits
from bot.core.report import Report
from bot.core.rule import Rule
from bot.render import render, text
from rules import ALL_RULES, RULES_BY_ID

# `any` and `info` are reviewdog's names: any finding fails; `info` is our `notice`.
FAIL_LEVELS = ("none", "any", "info", "notice", "warning", "error")
_FAIL_ALIASES = {"any": "notice", "info": "notice"}
ACTIONS_BOT = "github-actions[bot]"


class UsageError(Exception):
    """A bad command line or unreadable input: exit 2 with the message."""


def select_rules(spec: str | None) -> tuple[Rule, ...]:
    if not spec:
        return ALL_RULES
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [w for w in wanted if w not in RULES_BY_ID]
    if unknown:
        raise UsageError(f"unknown rule id(s): {', '.join(unknown)} "
                         f"(see `ci-stability rules`)")
    return tuple(RULES_BY_ID[w] for w in wanted)


def exit_code(report: Report, fail_level: str | None, config: Config) -> int:
    if fail_level is None:
        threshold = config.fail_on
    else:
        level = _FAIL_ALIASES.get(fail_level, fail_level)
        threshold = None if level == "none" else Severity.parse(level)
    worst = report.worst()
    found = threshold is not None and worst is not None and worst >= threshold
    return EXIT_FINDINGS if found else EXIT_OK


def write_output(report: Report, fmt: str, output: str | None) -> None:
    """Render in `fmt` (SARIF documents every registered rule) to a file or stdout."""
    if fmt == "text" and not output:
        write_segments(text.segments(report), sys.stdout)  # coloured on a terminal
        return
    rendered = render(report, fmt, ALL_RULES)
    if output:
        Path(output).write_text(rendered, encoding="utf-8")
    else:
        sys.stdout.write(rendered)


def add_github_arguments(parser: argparse.ArgumentParser, source: Any) -> None:
    """Add `--github` to `source` (the mutually exclusive source group) and its options."""
    source.add_argument("--github", metavar="OWNER/REPO#N",
                        help="a pull request on GitHub (token from GITHUB_TOKEN; "
                             "GITHUB_API_URL for GitHub Enterprise Server)")
    parser.add_argument("--post", action="store_true",
                        help="with --github: publish the check run, review and summary "
                             "comment exactly like the App")
    parser.add_argument("--bot-login", metavar="LOGIN",
                        help="with --post: the account GITHUB_TOKEN acts as, to find its own "
                             f"summary comment (default in GitHub Actions: {ACTIONS_BOT}; "
                             "also CI_STABILITY_BOT_LOGIN)")


def _bounded(low: int, high: int) -> Any:
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {low} to {high}, got {value}")
        return value
    return convert


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """`--max-files`/`--max-bytes`: the ceiling of what one review reads."""
    parser.add_argument("--max-files", metavar="N", type=_bounded(1, HARD_MAX_FILES),
                        help="review at most N files, in-scope first (default: "
                             f"{DEFAULT_LIMITS.max_files}; the config's `limits` may lower it)")
    parser.add_argument("--max-bytes", metavar="N", type=_bounded(MIN_BYTES, HARD_MAX_BYTES),
                        help="read at most N bytes of diff and text (default: "
                             f"{DEFAULT_LIMITS.max_bytes}; the config's `limits` may lower it)")


def limits_from(args: argparse.Namespace) -> ReviewLimits:
    return ReviewLimits(args.max_files or DEFAULT_LIMITS.max_files,
                        args.max_bytes or DEFAULT_LIMITS.max_bytes)
