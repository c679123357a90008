"""`ci-stability logs extract FILE|- [--format text|json] [--context N]`.

Exit codes: 0 when the log was analysed (also when no root cause was found),
2 for usage errors and unreadable input. Errors are one line on stderr, never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from bot.evidence.extract import (
    DEFAULT_CONTEXT,
    MAX_CONTEXT,
    LogLine,
    Result,
    RootCause,
    extract_binary,
    extract_file,
)

EXIT_OK, EXIT_USAGE = 0, 2
PROG = "ci-stability logs"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    # argparse would print usage and call sys.exit(2) itself; we want to return.
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Forensics on CI job logs.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    extract = commands.add_parser(
        "extract",
        help="print the root-cause line of a CI log",
        description="Find the root-cause line of a CI log (GitHub Actions, Buildkite, …).",
    )
    extract.add_argument("file", metavar="FILE", help="log file, or - for standard input")
    extract.add_argument("--format", choices=("text", "json"), default="text")
    extract.add_argument(
        "--context",
        type=int,
        default=DEFAULT_CONTEXT,
        metavar="N",
        help=f"lines of context before and after (0-{MAX_CONTEXT}, default {DEFAULT_CONTEXT})",
    )
    return parser


def _line_json(line: LogLine | None) -> dict[str, Any] | None:
    return None if line is None else {"line_no": line.line_no, "line": line.line}


def to_json(result: Result) -> dict[str, Any]:
    if isinstance(result, RootCause):
        return {
            "category": result.category,
            "line_no": result.line_no,
            "line": result.line,
            "signature": result.signature,
            "surface": _line_json(result.surface),
            "context": [_line_json(line) for line in result.context],
            "pattern": result.pattern_id,
            "lines_scanned": result.lines_scanned,
            "attempts": result.attempts,
            "occurrences": list(result.chain.occurrences),
            "chain": {
                "text": result.explain(),
                "symptoms": [
                    {"line_no": s.line_no, "category": s.category, "pattern": s.pattern_id,
                     "line": s.line, "count": s.count}
                    for s in result.chain.symptoms
                ],
            },
            "note": result.note,
        }
    return {
        "category": None,
        "line_no": None,
        "line": None,
        "signature": None,
        "surface": _line_json(result.surface),
        "context": [],
        "reason": f"no root cause found: {result.reason}",
        "lines_scanned": result.lines_scanned,
    }


def to_text(result: Result) -> str:
    if not isinstance(result, RootCause):
        out = [f"no root cause found: {result.reason} ({result.lines_scanned} lines scanned)"]
        if result.surface is not None:
            out.append(f"surface symptom: line {result.surface.line_no}: {result.surface.line}")
        return "\n".join(out) + "\n"
    width = len(str(max([result.line_no, *(c.line_no for c in result.context)])))
    out = [
        f"root cause: {result.category} at line {result.line_no}",
        f"signature:  {result.signature}",
    ]
    if result.note:
        out.append(f"note:       {result.note}")
    if result.surface is not None:
        out.append(f"surface:    line {result.surface.line_no}: {result.surface.line}")
    if result.attempts > 1:
        out.append(f"attempts:   printed {result.attempts} times (lines "
                   f"{', '.join(map(str, result.chain.occurrences))})")
    out.append(f"chain:      {result.explain()}")
    for symptom in result.chain.symptoms:
        times = f" (×{symptom.count})" if symptom.count > 1 else ""
        out.append(f"  explains {symptom.pattern_id} ({symptom.category}) at line "
                   f"{symptom.line_no}{times}: {symptom.line}")
    out.append("")
    for line in result.context_before:
        out.append(f"  {line.line_no:>{width}} | {line.line}")
    out.append(f"> {result.line_no:>{width}} | {result.line}")
    for line in result.context_after:
        out.append(f"  {line.line_no:>{width}} | {line.line}")
    return "\n".join(out) + "\n"


def _run_extract(args: argparse.Namespace) -> int:
    if not 0 <= args.context <= MAX_CONTEXT:
        raise _UsageError(f"--context must be between 0 and {MAX_CONTEXT}")
    try:
        if args.file == "-":
            result = extract_binary(sys.stdin.buffer, context=args.context)
        else:
            result = extract_file(args.file, context=args.context)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        sys.stderr.write(f"{PROG} extract: cannot read {args.file}: {reason}\n")
        return EXIT_USAGE
    if args.format == "json":
        sys.stdout.write(json.dumps(to_json(result), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(to_text(result))
    return EXIT_OK


def main(argv: Sequence[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(list(argv))
        if args.command is None:
            raise _UsageError("missing command (try: extract FILE)")
        return _run_extract(args)
    except _UsageError as exc:
        sys.stderr.write(f"{parser.format_usage()}{PROG}: error: {exc}\n")
        return EXIT_USAGE


if __name__ == "__main__":  # `python -m bot.cli.logs extract FILE`
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # `… | head`: the reader is gone, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_OK)
