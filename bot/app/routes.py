"""Webhook events → actions. One function per event; unknown actions are ignored.

GitHub keeps adding events and actions, so both the event name and the payload's
`action` are checked before anything is done.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.app.command_handler import handle_comment
from bot.app.context import AppContext
from bot.app.events import REVIEW_ACTIONS
from bot.app.evidence_hooks import ingest_workflow_job, ingest_workflow_run
from bot.app.review_job import review_pull
from bot.store import Delivery

log = logging.getLogger("bot.handlers")

Handler = Callable[[AppContext, Delivery, dict[str, Any]], Awaitable[None]]


def _repo(payload: dict[str, Any]) -> tuple[str, str]:
    full = payload["repository"]["full_name"]
    owner, _, name = str(full).partition("/")
    return owner, name


def _installation(payload: dict[str, Any]) -> int | None:
    installation = payload.get("installation") or {}
    value = installation.get("id")
    return int(value) if value is not None else None


async def on_pull_request(ctx: AppContext, delivery: Delivery, payload: dict[str, Any]) -> None:
    action = payload.get("action")
    pull = payload["pull_request"]
    if action == "edited":
        changes = payload.get("changes") or {}
        if not {"title", "body", "base"} & set(changes):
            return  # e.g. a milestone change: nothing the rules read
    elif action not in REVIEW_ACTIONS:
        return
    installation = _installation(payload)
    if installation is None:
        log.info("pull_request without an installation (a repository webhook?); ignored")
        return
    owner, repo = _repo(payload)
    await review_pull(ctx, installation, owner, repo, int(pull["number"]),
                      draft=bool(pull.get("draft")), delivery_id=delivery.id)


async def on_check_run(ctx: AppContext, delivery: Delivery, payload: dict[str, Any]) -> None:
    action = payload.get("action")
    check = payload["check_run"]
    if action == "requested_action":
        identifier = (payload.get("requested_action") or {}).get("identifier")
        if identifier != "rerun":
            return
    elif action != "rerequested":
        return
    await _rerun_for(ctx, delivery, payload, check.get("pull_requests") or [])


async def on_check_suite(ctx: AppContext, delivery: Delivery, payload: dict[str, Any]) -> None:
    if payload.get("action") != "rerequested":
        return
    await _rerun_for(ctx, delivery, payload, payload["check_suite"].get("pull_requests") or [])


async def _rerun_for(ctx: AppContext, delivery: Delivery, payload: dict[str, Any],
                     pulls: list[dict[str, Any]]) -> None:
    installation = _installation(payload)
    if installation is None or not pulls:
        return  # PRs from forks have no pull_requests in check payloads
    owner, repo = _repo(payload)
    for pull in pulls:
        await review_pull(ctx, installation, owner, repo, int(pull["number"]), force=True,
                          delivery_id=delivery.id)


async def on_issue_comment(ctx: AppContext, delivery: Delivery, payload: dict[str, Any]) -> None:
    if payload.get("action") != "created" or not payload["issue"].get("pull_request"):
        return
    installation = _installation(payload)
    if installation is None:
        return
    await handle_comment(ctx, installation, payload)


async def on_installation(ctx: AppContext, delivery: Delivery, payload: dict[str, Any]) -> None:
    account = ((payload.get("installation") or {}).get("account") or {}).get("login")
    log.info("installation %s: %s", payload.get("action"), account)


async def on_workflow_job(ctx: AppContext, delivery: Delivery, payload: dict[str, Any]) -> None:
    if payload.get("action") != "completed":
        return
    installation = _installation(payload)
    if installation is None:
        return
    await ingest_workflow_job(ctx, installation, payload)


async def on_workflow_run(ctx: AppContext, delivery: Delivery, payload: dict[str, Any]) -> None:
    if payload.get("action") == "completed":
        await ingest_workflow_run(ctx, payload)


HANDLERS: dict[str, Handler] = {
    "pull_request": on_pull_request,
    "check_run": on_check_run,
    "check_suite": on_check_suite,
    "issue_comment": on_issue_comment,
    "installation": on_installation,
    "installation_repositories": on_installation,
    "workflow_job": on_workflow_job,
    "workflow_run": on_workflow_run,
}


async def dispatch(ctx: AppContext, delivery: Delivery, payload: dict[str, Any]) -> None:
    """Run the handler for one delivery; the queue has parsed and checked the payload."""
    handler = HANDLERS.get(delivery.event)
    if handler is not None:
        await handler(ctx, delivery, payload)
