"""`ci-stability action`: what `action.yml` runs, inside GitHub Actions.

Reads the pull request from the event payload, reviews it through the one pipeline,
and reports the way the `reporter` input asks: `check+review` (check run, review and
summary comment, like the App), `check` (the check run alone), `annotations` or `sarif`
(no API writes). When GitHub refuses a write — the read-only GITHUB_TOKEN of a pull
request from a fork — the findings still reach the PR: as workflow annotations and in
the job's step summary, with a warning saying why.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from bot.cli.common import ACTIONS_BOT, FAIL_LEVELS, UsageError, exit_code, select_rules
from bot.cli.review_github import explain
from bot.core.report import Report
from bot.errors import RetryableError
from bot.github.calls import DEFAULT_API_URL, GitHubError
from bot.github.drive_sync import SyncDriver
from bot.github.review import ReviewOutcome, ReviewRequest, review_pull_request
from bot.render import markdown, render
from rules import ALL_RULES, option_specs

REPORTERS = ("check+review", "check", "annotations", "sarif")
FORK_HINT = (
    "GitHub refused to let this token write to the pull request (a pull request from a fork "
    "gets a read-only GITHUB_TOKEN), so the findings are shown as annotations and in the job "
    "summary instead. To publish on fork PRs, run the Action on `pull_request_target` "
    "(see the README: the tool reads the PR through the API and never runs its code)."
)
ANNOTATION_NOTE = (
    "GitHub Actions shows at most 10 error and 10 warning annotations per step; "
    "the table below lists every finding."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ci-stability action",
                                     description="Run as the GitHub Action (action.yml).")
    parser.add_argument("--reporter", choices=REPORTERS, default="check+review")
    parser.add_argument("--fail-level", choices=FAIL_LEVELS, default="none")
    parser.add_argument("--config", metavar="FILE", default="",
                        help="config file (default: the default branch's)")
    parser.add_argument("--rules", metavar="ID[,ID…]", default="")
    parser.add_argument("--bot-login", default="", help=f"default {ACTIONS_BOT}")
    return parser


def _pull_number(env: Mapping[str, str]) -> int | None:
    path = env.get("GITHUB_EVENT_PATH", "")
    if not path:
        raise UsageError("GITHUB_EVENT_PATH is not set: run this inside GitHub Actions")
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the event payload {path}: {exc}") from None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    number = pull.get("number") if isinstance(pull, dict) else None
    return number if isinstance(number, int) else None


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def _outputs(env: Mapping[str, str], values: Mapping[str, str]) -> None:
    _append(env.get("GITHUB_OUTPUT"), "".join(f"{k}={v}\n" for k, v in values.items()))


def _request(args: argparse.Namespace, env: Mapping[str, str], number: int) -> ReviewRequest:
    repository = env.get("GITHUB_REPOSITORY", "")
    if repository.count("/") != 1:
        raise UsageError("GITHUB_REPOSITORY is not OWNER/REPO")
    owner, repo = repository.split("/")
    config_text = None
    if args.config:
        try:
            config_text = Path(args.config).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UsageError(f"config {args.config}: cannot read: {exc.strerror}") from None
    publish = args.reporter in ("check+review", "check")
    return ReviewRequest(
        owner, repo, number, rules=select_rules(args.rules), option_specs=option_specs(),
        bot_login=(args.bot_login or ACTIONS_BOT) if publish else "", publish=publish,
        force=True, early_check=False, config_text=config_text, buttons=False,
        check_only=args.reporter == "check",
    )


def report_outcome(args: argparse.Namespace, env: Mapping[str, str],
                   outcome: ReviewOutcome) -> int:
    """Files, outputs, annotations and the step summary for a finished review."""
    report = outcome.report
    assert report is not None
    out_dir = Path(env.get("RUNNER_TEMP") or ".")
    paths = {"json": out_dir / "ci-stability.json", "sarif": out_dir / "ci-stability.sarif"}
    for fmt, path in paths.items():
        path.write_text(render(report, fmt, ALL_RULES), encoding="utf-8")
    refused = outcome.notes
    for note in refused:
        sys.stdout.write(f"::warning title=ci-stability::{note}\n")
    if refused:
        sys.stdout.write(f"::warning title=ci-stability::{FORK_HINT}\n")
    if args.reporter == "annotations" or refused:
        sys.stdout.write(render(report, "github", ALL_RULES))
    _append(env.get("GITHUB_STEP_SUMMARY"), _summary(report, refused, args.reporter))
    _outputs(env, {"conclusion": report.conclusion, "findings": str(len(report.findings)),
                   "json": str(paths["json"]), "sarif": str(paths["sarif"])})
    return exit_code(report, args.fail_level, outcome.config)


def _summary(report: Report, refused: Sequence[str], reporter: str) -> str:
    notes = [f"> {FORK_HINT}\n"] if refused else []
    if report.findings and (refused or reporter == "annotations"):
        notes.append(f"> {ANNOTATION_NOTE}\n")
    return "\n".join([*notes, markdown.render(report, marker=False), ""])


def run(args: argparse.Namespace, env: Mapping[str, str],
        driver: SyncDriver | None = None) -> int:
    try:
        number = _pull_number(env)
        if number is None:
            sys.stdout.write("::notice title=ci-stability::ci-stability reviews pull requests "
                             "(pull_request or pull_request_target events); skipped.\n")
            _outputs(env, {"conclusion": "skipped", "findings": "0"})
            return 0
        request = _request(args, env, number)
        token = env.get("GITHUB_TOKEN", "").strip()
        if not token:
            raise UsageError("the github-token input is empty")
    except UsageError as exc:
        sys.stdout.write(f"::error title=ci-stability::{exc}\n")
        return 2
    target = f"{request.owner}/{request.repo}#{number}"
    if driver is None:
        driver = SyncDriver(token, base_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL)
    try:
        outcome = driver.run(review_pull_request(request, None))
    except GitHubError as exc:
        sys.stdout.write(f"::error title=ci-stability::{explain(exc, target)}\n")
        return 2
    except RetryableError as exc:
        sys.stdout.write(f"::error title=ci-stability::GitHub is unavailable ({exc})\n")
        return 2
    finally:
        driver.close()
    return report_outcome(args, env, outcome)


def main(argv: Sequence[str], driver: SyncDriver | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    return run(args, os.environ, driver)
