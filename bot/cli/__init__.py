"""`ci-stability` entry point: dispatches to a subcommand module, imported lazily.

Lazy imports keep `ci-stability review` from paying for the web server, the GitHub
clients or the log index it does not use.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Sequence

import bot
from bot.cli.exits import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE

COMMANDS: dict[str, tuple[str, str]] = {
    "review": ("bot.cli.review", "review a pull request (patch, git range, PR JSON, GitHub)"),
    "rules": ("bot.cli.rules", "list the rule registry"),
    "explain": ("bot.cli.rules", "print a rule's documentation"),
    "config": ("bot.cli.config", "validate a .github/ci-stability.yml (`config check FILE`)"),
    "logs": ("bot.cli.logs", "find the root-cause line of a CI log (`logs extract FILE`)"),
    "runs": ("bot.cli.runs", "search or backfill the index of failing CI runs"),
    "eval": ("bot.cli.eval", "precision/recall on a labeled corpus of real PRs (or --logs)"),
    "app": ("bot.cli.app_register", "register the GitHub App from app.yaml (`app register`)"),
    "action": ("bot.cli.action", "run as the GitHub Action (action.yml)"),
    "advise": ("bot.cli.advise", "explain related failing CI runs with the LLM advisor"),
    "serve": ("bot.cli.serve", "run the GitHub App (webhooks, workers, /healthz, /metrics)"),
    "replay": ("bot.cli.replay", "drive one webhook payload through the App pipeline"),
    "stats": ("bot.cli.stats", "per-rule findings, misfires and waivers from the App's store"),
}

LONG_RUNNING = frozenset({"serve", "replay", "app"})

USAGE = "usage: ci-stability <command> [options]\n\ncommands:\n" + "".join(
    f"  {name:<10} {help_}\n" for name, (_, help_) in COMMANDS.items()
)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return EXIT_OK if args else EXIT_USAGE
    if args[0] == "--version":
        print(f"ci-stability {bot.__version__}")
        return EXIT_OK
    name = args[0]
    if name not in COMMANDS:
        sys.stderr.write(f"ci-stability: unknown command {name!r}\n\n{USAGE}")
        return EXIT_USAGE
    if name not in LONG_RUNNING:
        # One-shot commands build millions of short-lived acyclic objects (one tuple per
        # diff line); reference counting frees them, and the cyclic collector only
        # re-walks them (~10% of a large review). The process exits right after.
        gc.disable()
    # Deliberately lazy (start-up time): `review` must not pay for aiohttp or the index.
    module = importlib.import_module(COMMANDS[name][0])
    try:
        # `explain` shares a module with `rules`, so the command name is passed on.
        code: int = module.main(args if name == "explain" else args[1:])
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the last line of defence: never a traceback for users
        if os.environ.get("CI_STABILITY_DEBUG"):
            raise
        sys.stderr.write(
            f"ci-stability: internal error: {type(exc).__name__}: {exc}\n"
            "(set CI_STABILITY_DEBUG=1 for the traceback, and please report it)\n"
        )
        return EXIT_INTERNAL
