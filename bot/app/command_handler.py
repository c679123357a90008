"""Run `/stability …` commands from a PR comment: permissions, waivers, replies.

Durable: each comment is worked in steps whose results are saved (bot/store/
command_tables.py), so an attempt that fails (GitHub down, a kill) is retried like any
delivery and resumes where it stopped: a waiver is recorded once, the review re-run
once, and the reply, carrying a hidden marker naming the comment, is looked for before
it is posted again. Only then is the comment marked handled.

Bots are ignored; every refusal gets a reply saying why; 👀 acknowledges, 🚀 or 😕
tells how it ended. Rate limits bound what the bot writes (bot/app/command_limits.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from bot.app.advisor import dedup_note_reply, explain_failure_reply
from bot.app.command_limits import limit_notice, rate_buckets, review_bucket
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
from bot.errors import PermanentError
from bot.github.conversation import find_reply, permission, react, reply
from bot.github.drive_async import AsyncDriver
from bot.github.pr_state import PrState
from bot.render import markers, mdsafe
from rules import RULES_BY_ID

log = logging.getLogger("bot.commands")


def _is_bot(user: dict[str, Any]) -> bool:
    return user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")


class _Comment:
    """One comment being handled, and what earlier attempts at it recorded."""

    def __init__(self, ctx: AppContext, installation: int, payload: dict[str, Any]) -> None:
        comment = payload["comment"]
        self.ctx = ctx
        self.installation = installation
        self.id = int(comment["id"])
        self.owner, _, self.repo = str(payload["repository"]["full_name"]).partition("/")
        self.full_name = f"{self.owner}/{self.repo}"
        self.number = int(payload["issue"]["number"])
        user = comment.get("user") or payload.get("sender") or {}
        self.login = str(user.get("login", "someone"))
        self.progress = ctx.store.command_progress(self.id)
        self.progress.setdefault("steps", {})

    def save(self) -> None:
        self.ctx.store.save_command_progress(self.id, self.progress)


async def handle_comment(ctx: AppContext, installation: int, payload: dict[str, Any]) -> None:
    comment = payload["comment"]
    user = comment.get("user") or payload.get("sender") or {}
    if _is_bot(user) or _is_bot(payload.get("sender") or {}):
        return
    body = str(comment.get("body") or "")
    # A long comment takes a CommonMark parse of up to ~1 s on a loaded machine: off the
    # event loop, so webhook intake is not held up by it.
    commands = (await asyncio.to_thread(parse_commands, body, RULES_BY_ID)
                if PREFIX in body else [])
    if not commands or ctx.store.comment_handled(int(comment["id"])):
        return
    this = _Comment(ctx, installation, payload)
    driver = await ctx.driver(installation)
    if "limited" not in this.progress:
        this.progress["limited"] = ctx.store.take_rate(
            this.id, rate_buckets(this.login, this.full_name, this.number), ctx.clock())
        this.save()
    if this.progress["limited"]:
        await _over_limit(this, driver, str(this.progress["limited"]))
        return
    await driver.run(react(this.owner, this.repo, this.id, "eyes"))
    for step, command in enumerate(commands):
        if str(step) not in this.progress["steps"]:
            await _run_step(this, driver, step, command)
    steps = [this.progress["steps"][str(i)] for i in range(len(commands))]
    if any(rerun for _, _, rerun in steps) and not this.progress.get("reviewed"):
        try:
            await review_pull(ctx, installation, this.owner, this.repo, this.number, force=True)
        except PermanentError:
            # The review job put the failure on the check run; the reply still goes out.
            log.warning("the re-run requested by a command failed", exc_info=True)
        this.progress["reviewed"] = True
        this.save()
    replies = [text for text, _, _ in steps if text]
    if replies:
        await _reply_once(this, driver, "\n\n---\n\n".join(replies))
    ok = all(succeeded for _, succeeded, _ in steps)
    await driver.run(react(this.owner, this.repo, this.id, "rocket" if ok else "confused"))
    ctx.store.finish_command(this.id)


async def _over_limit(this: _Comment, driver: AsyncDriver, bucket: str) -> None:
    """One reply per window says the limit was reached; later comments get nothing, so
    a flood costs a bounded number of writes."""
    if "notice" not in this.progress:
        this.progress["notice"] = limit_notice(this.ctx.store, this.id, bucket, this.login,
                                               this.ctx.clock())
        this.save()
    if this.progress["notice"]:
        await _reply_once(this, driver, str(this.progress["notice"]))
        await driver.run(react(this.owner, this.repo, this.id, "confused"))
    this.ctx.store.finish_command(this.id)


async def _reply_once(this: _Comment, driver: AsyncDriver, text: str) -> None:
    """Post the reply unless an earlier attempt did: the intent is recorded before the
    post, so after a failure or kill mid-post the marker is looked for first."""
    if this.progress.get("reply_id"):
        return
    marker = markers.command_reply(this.id)
    if this.progress.get("reply_intent"):
        found = await driver.run(find_reply(this.owner, this.repo, this.number, marker,
                                            this.ctx.bot_login))
        if found is not None:
            this.progress["reply_id"] = found
            this.save()
            return
    this.progress["reply_intent"] = True
    this.save()
    # No marker of ours (or forged one) may come from the parts we quote: only this one.
    body = f"{markers.defang(text)}\n\n{marker}"
    this.progress["reply_id"] = await driver.run(
        reply(this.owner, this.repo, this.number, body)) or -1
    this.save()


async def _run_step(this: _Comment, driver: AsyncDriver, step: int, command: Command) -> None:
    """Run command `step` and record (reply text, succeeded, re-run the review); the
    waiver commands record their effect in the same transaction."""
    ctx = this.ctx
    if command.needs_write and not command.error:
        level = await driver.run(permission(this.owner, this.repo, this.login))
        if level not in WRITE_PERMISSIONS:
            this.progress["steps"][str(step)] = (
                refusal_for_permission(this.login, level, command), False, False)
            this.save()
            return
        assert command.rule is not None  # parse_commands guarantees it for these
        rule = mdsafe.code(command.rule)
        if command.name == "misfire":
            _misfire(this, step, command.rule, command.reason)
            return
        if command.name == "ignore":
            where = f" on {mdsafe.code(command.path)}" if command.path else ""
            this.progress["steps"][str(step)] = (
                f"Waived {rule}{where} for this PR, recorded as @{this.login}'s decision: "
                f"{mdsafe.text(command.reason or '')}. The check is being re-evaluated.",
                True, True)
            ctx.store.waive_once(this.id, step, this.progress, this.full_name, this.number,
                                 command.rule, command.path, command.reason or "",
                                 this.login, ctx.clock())
            return
        # The reply depends on what the removal found, so it is recorded after it.
        removed = ctx.store.unwaive_once(this.id, step, this.progress, this.full_name,
                                         this.number, command.rule)
        this.progress["steps"][str(step)] = (
            (f"Removed the waiver for {rule}; re-evaluating the check.", True, True) if removed
            else (f"There was no waiver for {rule} on this PR.", False, False))
        this.save()
        return
    this.progress["steps"][str(step)] = await _answer(this, command)
    this.save()


def _misfire(this: _Comment, step: int, rule_id: str, why: str | None) -> None:
    """Record a false-positive verdict, only against a finding the PR really has."""
    ctx, rule = this.ctx, mdsafe.code(rule_id)
    state = PrState.from_dict(ctx.store.get_pr_state(this.full_name, this.number))
    if not any(known.rule == rule_id for known in state.open.values()):
        this.progress["steps"][str(step)] = (
            f"The latest review of this PR has no {rule} finding, so there is no misfire "
            "to record.", False, False)
        this.save()
        return
    because = f" ({mdsafe.text(why)})" if why else ""
    this.progress["steps"][str(step)] = (
        f"Recorded a misfire of {rule} on this PR as @{this.login}'s verdict{because}. "
        "Thank you: verdicts count against the rule's precision (`ci-stability stats`). "
        f"To stop the finding from failing the check, `{PREFIX} ignore` it.", True, False)
    ctx.store.misfire_once(this.id, step, this.progress, this.full_name, this.number,
                           rule_id, why, this.login, ctx.clock())


async def _answer(this: _Comment, command: Command) -> tuple[str, bool, bool]:
    """The commands that change nothing of ours: (reply text, succeeded, re-run)."""
    ctx, args = this.ctx, (this.ctx, this.installation, this.owner, this.repo, this.number)
    if command.error:
        return (f"{mdsafe.code(command.raw[:200])}: {command.error}. "
                f"Comment `{PREFIX} help` for the commands.", False, False)
    if command.name == "help":
        return HELP, True, False
    if command.name == "explain":
        rule = RULES_BY_ID[command.rule or ""]
        return (f"**`{rule.id}`** (default severity: {rule.severity})\n\n{type(rule).docs()}",
                True, False)
    if command.name == "review":
        bucket = review_bucket(this.full_name, this.number)
        if ctx.store.take_rate(this.id, [bucket], ctx.clock()) is not None:
            return (f"`{PREFIX} review` was asked {bucket[1]} times in the last "
                    f"{int(bucket[2] // 60)} minutes on this PR; the review also re-runs on "
                    "every push, so please wait before asking again.", False, False)
        return "", True, True
    if command.name == "runs":
        return await runs_reply(*args), True, False
    if command.name == "explain-failure":
        return (*await explain_failure_reply(*args), False)
    if command.name == "draft-dedup-note":
        return (*await dedup_note_reply(*args), False)
    raise AssertionError(f"unhandled command {command.name}")  # parse_commands knows them
