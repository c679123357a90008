"""`ci-stability runs search|backfill|prune`: the failure index for maintainers.

Exit codes: 0 done, 1 the backfill stopped early (rate limit, API error; rerun to
resume), 2 usage errors, missing tokens or an unusable database. Errors are one
line on stderr, never a traceback; tokens are never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn, TextIO

from bot.cli.terminal import StatusLine
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from bot.evidence.actions_backfill import backfill_github
from bot.evidence.buildkite_backfill import backfill_buildkite
from bot.evidence.buildkite_rest import DEFAULT_API_URL, BuildkiteClient
from bot.evidence.index import (
    FAILED,
    FailureIndexError,
    JobQuery,
    JobRecord,
    SqliteFailureIndex,
    to_text,
)
from bot.evidence.needles import needles_for
from bot.evidence.relevance import NeedleMatcher
from bot.github.drive_sync import SyncDriver

PROG = "ci-stability runs"
EXIT_OK, EXIT_STOPPED, EXIT_USAGE = 0, 1, 2
DEFAULT_DB = "./ci-stability.db"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of days, got {text!r}") from None
    if not 0 < value <= 3650:
        raise argparse.ArgumentTypeError("expected 1 to 3650 days")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Search and fill the CI failure index.")
    db_help = "index database (default: $CI_STABILITY_DB or ./ci-stability.db)"
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    search = commands.add_parser("search", help="find indexed CI failures")
    search.add_argument("--db", help=db_help)
    search.add_argument("--repo", metavar="OWNER/REPO")
    search.add_argument("--file", action="append", default=[], metavar="PATH",
                        help="jobs whose name, log or test ids mention this file (repeatable)")
    search.add_argument("--job", metavar="TEXT", help="job name contains TEXT")
    search.add_argument("--signature", metavar="TEXT", help="failure signature contains TEXT")
    search.add_argument("--category", metavar="NAME", help="root-cause category, e.g. cuda-oom")
    search.add_argument("--since", type=_positive, default=14, metavar="DAYS")
    search.add_argument("--all", action="store_true", help="passing jobs too")
    search.add_argument("--limit", type=_positive, default=50)
    search.add_argument("--format", choices=("text", "json"), default="text")
    backfill = commands.add_parser("backfill", help="index past CI runs")
    backfill.add_argument("--db", help=db_help)
    source = backfill.add_mutually_exclusive_group()
    source.add_argument("--github", metavar="OWNER/REPO", help="GitHub Actions (GITHUB_TOKEN)")
    source.add_argument("--buildkite", metavar="ORG/PIPELINE",
                        help="Buildkite (BUILDKITE_API_TOKEN)")
    backfill.add_argument("--workflow", metavar="FILE", help="only this workflow (e.g. ci.yml)")
    backfill.add_argument("--days", type=_positive, default=14)
    prune = commands.add_parser("prune", help="drop runs older than the retention window")
    prune.add_argument("--db", help=db_help)
    prune.add_argument("--older-than", type=_positive, required=True, metavar="DAYS")
    return parser


def _open(args: argparse.Namespace) -> SqliteFailureIndex:
    return SqliteFailureIndex(args.db or os.environ.get("CI_STABILITY_DB") or DEFAULT_DB)


# -- search ---------------------------------------------------------------------------------
def _search(args: argparse.Namespace, now: datetime, out: TextIO) -> int:
    snapshot = PullRequestSnapshot(files=tuple(ChangedFile(path=p) for p in args.file))
    needles = needles_for(snapshot)
    query = JobQuery(
        repo=args.repo, since=now - timedelta(days=args.since), until=now,
        conclusions=() if args.all else (FAILED,),
        categories=(args.category,) if args.category else (),
        text_any=tuple(dict.fromkeys(n.text for n in needles)),
        job_name_like=args.job, signature_like=args.signature,
        limit=args.limit * 4 if needles else args.limit,
    )
    index = _open(args)
    try:
        jobs = index.jobs(query)
    finally:
        index.close()
    if needles:
        matcher = NeedleMatcher(needles)
        jobs = [j for j in jobs if matcher.matches(j)]
    jobs = jobs[: args.limit]
    if args.format == "json":
        out.write(json.dumps([_job_json(j) for j in jobs], ensure_ascii=False, indent=1) + "\n")
    else:
        out.write("".join(_job_text(j) for j in jobs) or "no matching jobs in the index\n")
    return EXIT_OK


def _job_json(job: JobRecord) -> dict[str, Any]:
    data = asdict(job)
    for key in ("started_at", "finished_at", "ingested_at"):
        data[key] = to_text(data[key])
    data["context"], data["mentions"] = list(job.context), list(job.mentions)
    return data


def _job_text(job: JobRecord) -> str:
    when = job.finished_at or job.started_at
    stamp = f"{when:%Y-%m-%d %H:%M}" if when else "????-??-?? ??:??"
    run = f" #{job.run_id}" if job.run_id else ""
    lines = [f"{stamp}  {job.conclusion:<8} {job.provider} {job.pipeline}{run}  {job.job_name}"]
    where = ", ".join(x for x in (job.branch, (job.commit_sha or "")[:12]) if x)
    if job.pr_number is not None:
        where += f", PR #{job.pr_number}"
    if where:
        lines.append(f"    on {where}")
    if job.line:
        lines.append(f"    {job.category} (line {job.line_no}): {job.line[:300]}")
        lines.append(f"    signature: {job.signature}")
    elif job.log_note:
        lines.append(f"    {job.log_note}")
    if job.surface:
        lines.append(f"    surface symptom (line {job.surface_line_no}): {job.surface[:300]}")
    if job.url:
        lines.append(f"    {job.url}")
    return "\n".join(lines) + "\n"


# -- backfill -------------------------------------------------------------------------------
def _token(*names: str) -> str:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    raise _UsageError(f"{names[0]} is not set (a token is needed to read the CI API)")


def _split(value: str, what: str) -> tuple[str, str]:
    parts = value.split("/")
    if len(parts) != 2 or not all(parts):
        raise _UsageError(f"expected {what}, got {value!r}")
    return parts[0], parts[1]


def _backfill(args: argparse.Namespace, now: datetime, out: TextIO) -> int:
    if not args.github and not args.buildkite:
        raise _UsageError("backfill needs --github OWNER/REPO or --buildkite ORG/PIPELINE")
    if args.workflow and not args.github:
        raise _UsageError("--workflow only applies to --github")
    progress = StatusLine(sys.stderr)
    index = _open(args)
    try:
        if args.github:
            summary = _github(args, index, now, progress)
        else:
            summary = _buildkite(args, index, now, progress)
    except KeyboardInterrupt:
        progress.done()
        sys.stderr.write(f"{PROG} backfill: interrupted; rerun the same command to resume\n")
        return 130
    except Exception as exc:
        progress.done()
        if isinstance(exc, _UsageError | FailureIndexError):
            raise
        sys.stderr.write(f"{PROG} backfill: stopped: {exc}; rerun the same command to resume\n")
        return EXIT_STOPPED
    finally:
        index.close()
    progress.done()
    out.write(f"indexed {summary}\n")
    return EXIT_OK


def _github(args: argparse.Namespace, index: SqliteFailureIndex, now: datetime,
            progress: StatusLine) -> str:
    owner, name = _split(args.github, "OWNER/REPO")
    token = _token("GITHUB_TOKEN", "GH_TOKEN")
    base_url = os.environ.get("GITHUB_API_URL", "").strip() or "https://api.github.com"
    driver = SyncDriver(token, base_url=base_url.rstrip("/"))
    try:
        stats = backfill_github(driver, index, f"{owner}/{name}", now=now, days=args.days,
                                workflow=args.workflow, progress=progress)
    finally:
        driver.close()
    return stats.summary()


def _buildkite(args: argparse.Namespace, index: SqliteFailureIndex, now: datetime,
               progress: StatusLine) -> str:
    import aiohttp

    org, pipeline = _split(args.buildkite, "ORG/PIPELINE")
    token = _token("BUILDKITE_API_TOKEN")
    base_url = os.environ.get("BUILDKITE_API_URL", "").strip() or DEFAULT_API_URL

    async def run() -> str:
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=60)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            client = BuildkiteClient(session, token, base_url=base_url)
            stats = await backfill_buildkite(client, index, org, pipeline, now=now,
                                             days=args.days, progress=progress)
        return stats.summary()

    return asyncio.run(run())


def _prune(args: argparse.Namespace, now: datetime, out: TextIO) -> int:
    index = _open(args)
    try:
        removed = index.prune(now - timedelta(days=args.older_than))
    finally:
        index.close()
    out.write(f"removed {removed} jobs older than {args.older_than} days\n")
    return EXIT_OK


def main(argv: Sequence[str], *, now: datetime | None = None) -> int:
    parser = _parser()
    moment = now or datetime.now(UTC)
    try:
        args = parser.parse_args(list(argv))
        handlers = {"search": _search, "backfill": _backfill, "prune": _prune}
        if args.command not in handlers:
            raise _UsageError("missing command (search, backfill or prune)")
        return handlers[args.command](args, moment, sys.stdout)
    except _UsageError as exc:
        sys.stderr.write(f"{parser.format_usage()}{PROG}: error: {exc}\n")
        return EXIT_USAGE
    except FailureIndexError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
