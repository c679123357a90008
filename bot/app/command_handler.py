"""Run `/stability …` commands from a PR comment: permissions, waivers, replies.

Every comment is handled once (its id is recorded), bots are ignored, and every
refusal gets a reply saying why. 👀 acknowledges, 🚀 or 😕 tells how it ended.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.app.advisor import dedup_note_reply, explain_failure_reply
from bot.app.commands import (
    HELP,
    PREFIX,
    WRITE_PERMISSIONS,
    Command,
    parse_commands,
    refusal_for_permission,
)
from bot.app.context import AppContext
from bot.app.evidence_hooks import runs_reply
from bot.app.review_job import review_pull
from bot.github.conversation import permission, react, reply
from bot.github.drive_async import AsyncDriver
from bot.render import mdsafe
from rules import RULES_BY_ID

log = logging.getLogger("bot.commands")
COMMANDS_PER_WINDOW = 10
WINDOW_SECONDS = 600.0


def _is_bot(user: dict[str, Any]) -> bool:
    return user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")


async def handle_comment(ctx: AppContext, installation: int, payload: dict[str, Any]) -> None:
    comment = payload["comment"]
    user = comment.get("user") or payload.get("sender") or {}
    if _is_bot(user) or _is_bot(payload.get("sender") or {}):
        return
    commands = parse_commands(str(comment.get("body") or ""), RULES_BY_ID)
    if not commands or not ctx.store.mark_comment_handled(int(comment["id"])):
        return
    owner, _, repo = str(payload["repository"]["full_name"]).partition("/")
    number = int(payload["issue"]["number"])
    login = str(user.get("login", "someone"))
    driver = await ctx.driver(installation)
    await driver.run(react(owner, repo, int(comment["id"]), "eyes"))
    if not ctx.store.allow_command(login, ctx.clock(), COMMANDS_PER_WINDOW, WINDOW_SECONDS):
        await driver.run(reply(owner, repo, number, (
            f"@{login}, you have sent more than {COMMANDS_PER_WINDOW} commands in "
            f"{int(WINDOW_SECONDS // 60)} minutes; please wait a few minutes and try again.")))
        await driver.run(react(owner, repo, int(comment["id"]), "confused"))
        return
    replies: list[str] = []
    ok = True
    rerun = False
    for command in commands:
        text, succeeded, wants_review = await _run_one(ctx, driver, installation, owner, repo,
                                                       number, login, command)
        ok = ok and succeeded
        rerun = rerun or wants_review
        if text:
            replies.append(text)
    if rerun:
        await review_pull(ctx, installation, owner, repo, number, force=True)
    if replies:
        await driver.run(reply(owner, repo, number, "\n\n---\n\n".join(replies)))
    await driver.run(react(owner, repo, int(comment["id"]), "rocket" if ok else "confused"))


async def _run_one(
    ctx: AppContext, driver: AsyncDriver, installation: int, owner: str, repo: str,
    number: int, login: str, command: Command,
) -> tuple[str, bool, bool]:
    """(reply text, succeeded, re-run the review)."""
    if command.error:
        return (f"`{mdsafe.text(command.raw[:200])}`: {command.error}. "
                f"Comment `{PREFIX} help` for the commands.", False, False)
    if command.name == "help":
        return HELP, True, False
    if command.name == "explain":
        return _explain(command.rule or ""), True, False
    if command.name == "review":
        return "", True, True
    if command.name == "runs":
        return await runs_reply(ctx, installation, owner, repo, number), True, False
    if command.name == "explain-failure":
        return (*await explain_failure_reply(ctx, installation, owner, repo, number), False)
    if command.name == "draft-dedup-note":
        return (*await dedup_note_reply(ctx, installation, owner, repo, number), False)
    level = await driver.run(permission(owner, repo, login))
    if level not in WRITE_PERMISSIONS:
        return refusal_for_permission(login, level, command), False, False
    full_name = f"{owner}/{repo}"
    assert command.rule is not None  # parse_commands guarantees it for ignore/unignore
    if command.name == "ignore":
        ctx.store.add_waiver(full_name, number, command.rule, command.path,
                             command.reason or "", login, ctx.clock())
        where = f" on `{mdsafe.text(command.path)}`" if command.path else ""
        return (f"Waived `{command.rule}`{where} for this PR, recorded as @{login}'s decision: "
                f"{mdsafe.text(command.reason or '')}. The check is being re-evaluated.",
                True, True)
    removed = ctx.store.remove_waivers(full_name, number, command.rule)
    if not removed:
        return f"There was no waiver for `{command.rule}` on this PR.", False, False
    return f"Removed the waiver for `{command.rule}`; re-evaluating the check.", True, True


def _explain(rule_id: str) -> str:
    rule = RULES_BY_ID[rule_id]
    return f"**`{rule.id}`** (default severity: {rule.severity})\n\n{type(rule).docs()}"
