"""`/stability …` slash commands: parsing and the replies that need no I/O.

A command must start a line of a top-level paragraph as GitHub renders the comment:
inside a code block or span, an HTML comment, `<pre>`, a quote, a list or `<details>`
it is text, so a comment that merely shows, quotes or hides a command never runs it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from bot.app.visible import visible_command_lines
from bot.render import mdsafe

PREFIX = "/stability"
MAX_COMMANDS_PER_COMMENT = 5
MAX_REASON_CHARS = 500
MAX_BODY_CHARS = 65_536  # GitHub's own limit for a comment body
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
NEEDS_WRITE = frozenset({"ignore", "unignore", "misfire"})
SUBCOMMANDS = ("review", "explain", "ignore", "unignore", "misfire", "runs", "help")
# The LLM advisor's commands (answered only where it is configured).
ADVISOR_COMMANDS = ("explain-failure", "draft-dedup-note")

HELP = """\
**ci-stability-bot commands** (start a comment line with them):

| command | what it does | who |
|---|---|---|
| `/stability review` | re-run the review on the current head | anyone |
| `/stability explain <rule>` | show a rule's documentation | anyone |
| `/stability runs` | list prior failing CI runs related to this PR's files | anyone |
| `/stability ignore <rule> [path] -- <reason>` | waive a rule here (who, why, when kept) | write |
| `/stability unignore <rule>` | remove that waiver | write |
| `/stability misfire <rule> [-- why]` | report the rule's finding here as wrong | write |
| `/stability explain-failure` | advisor: likely root cause of the related failing runs | anyone |
| `/stability draft-dedup-note` | advisor: a duplicate-work note for you to paste | anyone |
| `/stability help` | this message | anyone |
"""

_LINE_RE = re.compile(rf"^{re.escape(PREFIX)}(?:\s+(.*))?$")


@dataclass(frozen=True)
class Command:
    name: str
    rule: str | None = None
    path: str | None = None
    reason: str | None = None
    error: str | None = None  # set when the command was recognised but malformed
    raw: str = ""

    @property
    def needs_write(self) -> bool:
        return self.name in NEEDS_WRITE


def _command_lines(body: str) -> Iterator[str]:
    """The raw lines that GitHub renders as a visible paragraph line starting with
    the prefix (see bot/app/visible.py); the arguments come from the raw text."""
    yield from visible_command_lines(body[:MAX_BODY_CHARS], PREFIX)


def _parse_line(line: str, known_rules: Mapping[str, object]) -> Command | None:
    match = _LINE_RE.match(line)
    if match is None:
        return None  # e.g. "/stabilityfoo"
    rest = (match.group(1) or "").strip()
    words, _, reason = rest.partition(" -- ")
    if rest.endswith(" --"):
        words, reason = rest[:-3], ""
    try:
        parts = shlex.split(words)
    except ValueError:
        parts = words.split()
    if not parts:
        return Command("help", raw=line)
    name, args = parts[0].lower(), parts[1:]
    if name in ADVISOR_COMMANDS:
        return Command(name, raw=line)
    if name not in SUBCOMMANDS:
        return Command(name, error=f"unknown command {mdsafe.code(name[:40])}", raw=line)
    if name in ("review", "runs", "help"):
        return Command(name, raw=line)
    if not args:
        return Command(name, error=f"`{PREFIX} {name}` needs a rule id", raw=line)
    rule = args[0]
    if rule not in known_rules:
        return Command(name, rule=rule, error=f"unknown rule {mdsafe.code(rule[:60])}", raw=line)
    if name in ("explain", "unignore"):
        return Command(name, rule=rule, raw=line)
    if name == "misfire":  # the why is optional, after `--` or just after the rule
        why = reason.strip() or " ".join(args[1:])
        return Command(name, rule=rule, reason=why[:MAX_REASON_CHARS] or None, raw=line)
    reason = reason.strip()
    if not reason:
        return Command(name, rule=rule, raw=line, error=(
            f"a reason is required: `{PREFIX} ignore {rule} [path] -- why this is acceptable`"
        ))
    path = args[1] if len(args) > 1 else None
    return Command(name, rule=rule, path=path, reason=reason[:MAX_REASON_CHARS], raw=line)


def parse_commands(body: str, known_rules: Mapping[str, object]) -> list[Command]:
    commands: list[Command] = []
    for line in _command_lines(body or ""):
        command = _parse_line(line, known_rules)
        if command is not None:
            commands.append(command)
        if len(commands) >= MAX_COMMANDS_PER_COMMENT:
            break
    return commands


def refusal_for_permission(user: str, permission: str, command: Command) -> str:
    return (
        f"Sorry @{user}, `{PREFIX} {command.name}` needs write, maintain or admin access to "
        f"this repository; your permission is `{permission}`. A maintainer can run it instead."
    )
