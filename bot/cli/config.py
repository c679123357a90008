"""`ci-stability config check [FILE]`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bot.core.config import CONFIG_PATH, ConfigError, parse_config
from rules import option_specs


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="ci-stability config")
    sub = parser.add_subparsers(dest="action", required=True)
    check = sub.add_parser("check", help="validate a config file")
    check.add_argument("file", nargs="?", default=CONFIG_PATH)
    args = parser.parse_args(argv)
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
        sys.stderr.write(f"{exc}\n")
        return 1
    disabled = sorted(r for r, s in config.rules.items() if not s.enabled)
    print(f"{path}: OK" + (f" (disabled: {', '.join(disabled)})" if disabled else ""))
    return 0
