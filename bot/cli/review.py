"""`ci-stability review`: build a snapshot from one source, run the engine, render."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bot.cli.common import (
    FAIL_LEVELS,
    UsageError,
    add_github_arguments,
    add_limit_arguments,
    exit_code,
    limits_from,
    select_rules,
    write_output,
)
from bot.core.config import CONFIG_PATH, Config, ConfigError, parse_config
from bot.core.engine import classify_snapshot, review
from bot.core.limits import ReviewLimits, effective_limits
from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.core.surfaces import classify, surface_table
from bot.render import FORMATS
from bot.sources import SourceError
from bot.sources.git import (
    git_root,
    read_file_at,
    snapshot_from_git,
    snapshot_from_index,
    split_range,
)
from bot.sources.patch import snapshot_from_patch
from bot.sources.prjson import snapshot_from_pr_json
from rules import option_specs

MAX_BODY_BYTES = 1024 * 1024  # PR bodies on GitHub are capped at 65,536 chars anyway


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ci-stability review",
        description="Review a pull request's CI-stability surfaces.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--patch", metavar="FILE", help="unified diff file, or - for stdin")
    source.add_argument("--git", metavar="BASE..HEAD", help="a range in a local checkout")
    source.add_argument("--pr", metavar="FILE", help="PR JSON (GitHub PR + files shapes)")
    source.add_argument("--staged", action="store_true",
                        help="the staged changes in --repo (for pre-commit)")
    add_github_arguments(parser, source)
    parser.add_argument("--repo", metavar="DIR", default=".", help="checkout for --git")
    parser.add_argument("--title", help="PR title (for --patch / --git)")
    parser.add_argument("--body-file", metavar="FILE", help="PR description (for --patch / --git)")
    parser.add_argument("--config", metavar="FILE", help=f"config file (default: {CONFIG_PATH} "
                        "at the base revision with --git, at HEAD with --staged, else in the "
                        "work tree of the current git repository)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--fail-level", choices=FAIL_LEVELS,
                        help="exit 1 when a finding is at or above this level "
                             "(default: the config's fail_on, error)")
    parser.add_argument("--rules", metavar="ID[,ID…]", help="run only these rules")
    parser.add_argument("--evidence-db", metavar="PATH",
                        help="failure index (SQLite, as written by the App or `runs backfill`): "
                             "adds the prior failing runs related to the changed files")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the output here")
    add_limit_arguments(parser)
    return parser


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None


def _body(args: argparse.Namespace) -> str:
    if not args.body_file:
        return ""
    return _read(args.body_file)[:MAX_BODY_BYTES].decode("utf-8", "replace")


def _find_config(args: argparse.Namespace) -> tuple[str | None, str]:
    """The config's text and where it came from: never the PR's own head version."""
    if args.config:
        return _read(args.config).decode("utf-8", "replace"), args.config
    if args.git:
        base, _ = split_range(args.git, Path(args.repo))
        return read_file_at(Path(args.repo), base, CONFIG_PATH), f"{base}:{CONFIG_PATH}"
    if args.staged:
        return read_file_at(Path(args.repo), "HEAD", CONFIG_PATH), f"HEAD:{CONFIG_PATH}"
    root = git_root(Path.cwd())
    path = root / CONFIG_PATH if root is not None else None
    if path is None or not path.is_file():
        return None, CONFIG_PATH
    return path.read_bytes().decode("utf-8", "replace"), str(path)


def _load_config(args: argparse.Namespace) -> Config:
    text, source = _find_config(args)
    if text is None:
        return Config()
    config = parse_config(text, option_specs(), source=source)
    if not args.config:  # found, not given: say which file shaped the review
        sys.stderr.write(f"ci-stability review: using the config {source}\n")
    return config


def _snapshot(args: argparse.Namespace, config: Config, limits: ReviewLimits
              ) -> PullRequestSnapshot:
    table = surface_table(config.surfaces)
    if args.patch:
        snapshot = snapshot_from_patch(
            _read(args.patch), limits=limits,
            wanted=lambda path: classify(path, table) is not None)
    elif args.staged:
        snapshot = snapshot_from_index(
            Path(args.repo), lambda path: classify(path, table) is not None)
    elif args.git:
        snapshot = snapshot_from_git(
            args.git, Path(args.repo), lambda path: classify(path, table) is not None
        )
    else:
        snapshot = snapshot_from_pr_json(_read(args.pr))
    return dataclasses.replace(
        snapshot,
        title=snapshot.title if args.title is None else args.title,
        body=_body(args) if args.body_file else snapshot.body,
    )


def _with_evidence(report: Report, snapshot: PullRequestSnapshot, path: str,
                   config: Config) -> Report:
    """The "Prior failing runs" section, offline, from an index file."""
    # Deliberately lazy (start-up time): the index and its log catalog cost ~80 ms to
    # import, and only --evidence-db needs them.
    from bot.evidence.index import FailureIndexError, SqliteFailureIndex
    from bot.evidence.lookup import evidence_decorator

    if not Path(path).is_file():
        raise UsageError(f"--evidence-db {path}: no such file")
    try:
        index = SqliteFailureIndex(path)
    except FailureIndexError as exc:
        raise UsageError(f"--evidence-db {path}: {exc}") from None
    try:
        # Wall-clock time only here, at the edge: it dates the evidence window.
        decorate = evidence_decorator(index, now=datetime.now(UTC))
        return decorate(report, classify_snapshot(snapshot, config))
    finally:
        index.close()


def main(argv: Sequence[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    if args.github:
        # Deliberately lazy (start-up time): the GitHub clients cost ~0.5 s to import,
        # which every local review would pay for.
        from bot.cli import review_github

        return review_github.run(args)
    try:
        config = _load_config(args)
        rules = select_rules(args.rules)
        limits, over = effective_limits(config.limits, limits_from(args))
        snapshot = _snapshot(args, config, limits)
    except (UsageError, SourceError, ConfigError) as exc:
        sys.stderr.write(f"ci-stability review: {exc}\n")
        return 2
    if over:
        sys.stderr.write(f"ci-stability review: warning: {over} (--max-files/--max-bytes)\n")
    report = review(snapshot, config, rules, limits=limits)
    if args.evidence_db:
        try:
            report = _with_evidence(report, snapshot, args.evidence_db, config)
        except UsageError as exc:
            sys.stderr.write(f"ci-stability review: {exc}\n")
            return 2
    write_output(report, args.format, args.output)
    return exit_code(report, args.fail_level, config)
