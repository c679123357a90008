"""`ci-stability config check [FILE]` and `ci-stability config schema`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bot.core.config import CONFIG_PATH, ConfigError, parse_config
from bot.core.config_schema import config_schema
from rules import option_specs


def schema_text() -> str:
    """The published schema (schema/ci-stability.schema.json), as `config schema` prints it."""
    return json.dumps(config_schema(option_specs()), indent=2) + "\n"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="ci-stability config")
    sub = parser.add_subparsers(dest="action", required=True)
    check = sub.add_parser("check", help="validate a config file, reporting every problem")
    check.add_argument("file", nargs="?", default=CONFIG_PATH)
    sub.add_parser("schema", help="print the config's JSON Schema (for editors)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    if args.action == "schema":
        sys.stdout.write(schema_text())
        return 0
    path = Path(args.file)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        sys.stderr.write(f"{path}: cannot read: {exc.strerror}\n")
        return 2
    except UnicodeDecodeError:
        sys.stderr.write(f"{path}: not UTF-8 text\n")
        return 2
    try:
        config = parse_config(text, option_specs(), source=str(path))
    except ConfigError as exc:
        for problem in exc.problems:
            sys.stderr.write(f"{problem}\n")
        count = len(exc.problems)
        sys.stderr.write(f"{path}: {count} problem{'s' if count != 1 else ''}\n")
        return 1
    disabled = sorted(r for r, s in config.rules.items() if not s.enabled)
    print(f"{path}: OK" + (f" (disabled: {', '.join(disabled)})" if disabled else ""))
    return 0
