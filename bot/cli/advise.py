"""`ci-stability advise --pr FILE --evidence-db PATH`: the advisor's explanation, offline.

Reviews the PR JSON with the same engine, finds the related prior failing runs in the
index file, and asks the configured OpenAI-compatible server (the sync client) for the
likely root cause, verified like the App's. No GitHub access, so no dedup draft here.
Running the command is the opt-in: the repository's `advisor:` key is not consulted.

Exit codes: 0 answered (or nothing to explain), 1 the model gave no usable answer,
2 usage or input errors.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bot.advisor.advice import explain_prompt, finish, reply
from bot.advisor.client import AdvisorFailure
from bot.advisor.runtime import Advisor
from bot.advisor.settings import BASE_URL_VAR, MODEL_VAR, AdvisorSettingsError
from bot.cli.common import EXIT_OK, EXIT_USAGE, UsageError
from bot.core.config import Config, ConfigError, parse_config
from bot.core.engine import classify_snapshot, review
from bot.evidence.index import FailureIndexError, SqliteFailureIndex
from bot.evidence.lookup import prior_failing_runs
from bot.sources import SourceError
from bot.sources.prjson import snapshot_from_pr_json
from rules import ALL_RULES, option_specs

EXIT_NO_ANSWER = 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ci-stability advise",
        description="Explain the prior failing CI runs related to a PR with the LLM advisor "
                    f"({BASE_URL_VAR} and {MODEL_VAR} must be set).")
    parser.add_argument("--pr", metavar="FILE", required=True, help="a PR JSON file")
    parser.add_argument("--evidence-db", metavar="PATH", required=True,
                        help="the failure index (SQLite file written by `ci-stability runs`)")
    parser.add_argument("--config", metavar="FILE", help="a .github/ci-stability.yml to apply")
    parser.add_argument("--now", metavar="ISO-TIME",
                        help="date the evidence window from this time (default: now)")
    return parser


def _config(path: str | None) -> Config:
    if not path:
        return Config()
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_config(text, option_specs(), source=path)


def _now(text: str | None) -> datetime:
    if not text:
        return datetime.now(UTC)  # wall-clock time only here, at the edge
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--now {text!r}: not an ISO-8601 time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def main(argv: Sequence[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    try:
        advisor = Advisor.from_env(os.environ)
        if advisor is None:
            raise UsageError(f"the advisor is off: set {BASE_URL_VAR} and {MODEL_VAR}")
        config = _config(args.config)
        now = _now(args.now)
        snapshot = classify_snapshot(snapshot_from_pr_json(Path(args.pr).read_bytes()), config)
        if not Path(args.evidence_db).is_file():
            raise UsageError(f"--evidence-db {args.evidence_db}: no such file")
        index = SqliteFailureIndex(args.evidence_db)
    except OSError as exc:
        sys.stderr.write(f"ci-stability advise: {args.pr}: cannot read: {exc.strerror}\n")
        return EXIT_USAGE
    except (UsageError, SourceError, ConfigError, AdvisorSettingsError,
            FailureIndexError) as exc:
        sys.stderr.write(f"ci-stability advise: {exc}\n")
        return EXIT_USAGE
    try:
        related = prior_failing_runs(index, snapshot, now=now).related
    finally:
        index.close()
    if not related:
        print("No prior failing run in the index relates to this pull request's files; "
              "nothing to explain.")
        return EXIT_OK
    report = review(snapshot, config, ALL_RULES)
    prompt = explain_prompt(report, snapshot, related, advisor.settings.prompt_tokens)
    try:
        answer = advisor.ask_blocking(f"{snapshot.repo}#{snapshot.number}", prompt)
    except AdvisorFailure as exc:
        sys.stderr.write(f"ci-stability advise: no advice: {exc.reason}\n")
        return EXIT_NO_ANSWER
    finally:
        advisor.close()
    advice = finish(prompt, answer, snapshot.repo, advisor.settings.model)
    print(reply("Advisor: likely root cause of the prior failing runs", advice))
    return EXIT_OK
