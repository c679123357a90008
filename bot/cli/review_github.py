"""`ci-stability review --github OWNER/REPO#N [--post]`: the App's review, from a shell.

Fetches and publishes through the same flows as the App (bot.github.review),
driven synchronously by PyGithub. Needs GITHUB_TOKEN; GITHUB_API_URL points it at
GitHub Enterprise Server (or a test server).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from bot.cli.common import (
    ACTIONS_BOT,
    FAIL_LEVELS,
    UsageError,
    add_github_arguments,
    add_limit_arguments,
    exit_code,
    limits_from,
    select_rules,
    write_output,
)
from bot.errors import RetryableError
from bot.github.calls import DEFAULT_API_URL, GitHubError
from bot.github.drive_sync import SyncDriver
from bot.github.review import ReviewRequest, review_pull_request
from bot.render import FORMATS
from rules import option_specs

_TARGET_RE = re.compile(
    r"^(?:https?://[^/]+/)?(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+)"
    r"(?:#|/pull/)(?P<number>[0-9]+)/?$"
)


def parse_target(spec: str) -> tuple[str, str, int]:
    """OWNER/REPO#N (or a pull request URL) → (owner, repo, number)."""
    found = _TARGET_RE.match(spec.strip())
    if found is None or int(found["number"]) < 1:
        raise UsageError(
            f"--github {spec!r}: expected OWNER/REPO#NUMBER, e.g. vllm-project/vllm#123"
        )
    return found["owner"], found["repo"], int(found["number"])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ci-stability review",
        description="Review a pull request on GitHub, optionally publishing the result.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    add_github_arguments(parser, source)
    parser.add_argument("--config", metavar="FILE",
                        help="config file (default: .github/ci-stability.yml on the "
                             "repository's default branch)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--fail-level", choices=FAIL_LEVELS)
    parser.add_argument("--rules", metavar="ID[,ID…]", help="run only these rules")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the output here")
    add_limit_arguments(parser)
    return parser


def _bot_login(args: argparse.Namespace) -> str:
    login = args.bot_login or os.environ.get("CI_STABILITY_BOT_LOGIN")
    if not login and os.environ.get("GITHUB_ACTIONS") == "true":
        login = ACTIONS_BOT
    if not login:
        raise UsageError("--post needs the login GITHUB_TOKEN acts as, to find its own summary "
                         "comment: pass --bot-login LOGIN (automatic inside GitHub Actions)")
    return str(login)


def explain(exc: GitHubError, target: str) -> str:
    if exc.status == 401:
        return "GitHub rejected the token (401 Bad credentials): check GITHUB_TOKEN"
    if exc.status == 404:
        return (f"{target}: not found, or not visible with this token "
                f"({exc.operation} answered 404)")
    if exc.status == 403:
        return f"{target}: the token lacks a permission ({exc})"
    return f"{target}: {exc}"


def run(args: argparse.Namespace, driver: SyncDriver | None = None) -> int:
    """Execute a parsed `review --github` command line; returns the exit code.

    `driver` replaces the default PyGithub driver (tests use one without PyGithub's
    pauses between requests).
    """
    err = sys.stderr
    try:
        owner, repo, number = parse_target(args.github)
        token = os.environ.get("GITHUB_TOKEN", "").strip()
        if not token:
            raise UsageError("--github needs a token: set GITHUB_TOKEN (read access to the "
                             "repository; --post also needs checks, pull requests and issues "
                             "write)")
        bot_login = _bot_login(args) if args.post else ""
        config_text = None
        if args.config:
            try:
                config_text = Path(args.config).read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise UsageError(f"{args.config}: cannot read: {exc.strerror}") from None
        request = ReviewRequest(
            owner, repo, number, rules=select_rules(args.rules), option_specs=option_specs(),
            bot_login=bot_login, publish=bool(args.post), force=True, early_check=False,
            config_text=config_text, buttons=False,  # no App here to answer the button
            limits=limits_from(args),
        )
    except UsageError as exc:
        err.write(f"ci-stability review: {exc}\n")
        return 2
    target = f"{owner}/{repo}#{number}"
    if driver is None:
        driver = SyncDriver(token, base_url=os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL)
    try:
        outcome = driver.run(review_pull_request(request, None))
    except GitHubError as exc:
        err.write(f"ci-stability review: {explain(exc, target)}\n")
        return 2
    except RetryableError as exc:
        err.write(f"ci-stability review: GitHub is unavailable or rate-limiting ({exc}); "
                  "try again later\n")
        return 2
    finally:
        driver.close()
    assert outcome.report is not None
    for note in outcome.notes:
        err.write(f"ci-stability review: warning: {note}\n")
    write_output(outcome.report, args.format, args.output)
    return exit_code(outcome.report, args.fail_level, outcome.config)


def main(argv: Sequence[str], driver: SyncDriver | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    return run(args, driver)
