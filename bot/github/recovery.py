"""What this bot already published on a PR, read back from GitHub by its markers:
all of it when the caller's state does not know the PR's history (the CLI, a lost
database), or just the review or summary whose write a crash left in doubt (the
publication journal, bot/github/journal.py, says which).
"""

from __future__ import annotations

from typing import Any

from bot.github.calls import Flow, paginate, repo_path
from bot.github.journal import SUMMARY_STEP, Journal, review_step
from bot.github.pr_state import PrState, digest
from bot.render import markers


def _by(item: dict[str, Any], login: str) -> bool:
    return str((item.get("user") or {}).get("login", "")).lower() == login.lower()


def _our_summary(comments: list[Any], bot_login: str) -> dict[str, Any] | None:
    return next((c for c in comments if isinstance(c, dict) and _by(c, bot_login)
                 and markers.is_summary(c.get("body") or "")), None)


def _comments(owner: str, repo: str, number: int) -> Flow[list[Any]]:
    return (yield from paginate(f"{repo_path(owner, repo)}/issues/{number}/comments",
                                "issues/list-comments"))


def _reviews(owner: str, repo: str, number: int) -> Flow[list[Any]]:
    return (yield from paginate(f"{repo_path(owner, repo)}/pulls/{number}/reviews",
                                "pulls/list-reviews"))


def recover_state(owner: str, repo: str, number: int, bot_login: str) -> Flow[PrState]:
    """What this bot already published on the PR, read back from GitHub."""
    comments = yield from _comments(owner, repo, number)
    state = PrState()
    summary = _our_summary(comments, bot_login)
    if summary is not None:
        state = PrState.from_summary(summary["body"])
        state.summary_id = summary["id"]
        state.summary_digest = digest(markers.without_state(summary["body"]))
    reviews = yield from _reviews(owner, repo, number)
    for review in reviews:
        body = review.get("body") or ""
        if _by(review, bot_login) and markers.is_review(body):
            state.posted.extend(markers.fingerprints_in(body))
            state.review_shas.append(str(review.get("commit_id")))
    state.history_known = True
    return state


def known_state(owner: str, repo: str, number: int, bot_login: str,
                prior_state: dict[str, Any] | None) -> Flow[PrState]:
    """The prior state, recovered from GitHub when it does not know the PR's history."""
    given = PrState.from_dict(prior_state)
    if given.history_known:
        return given
    state = yield from recover_state(owner, repo, number, bot_login)
    if given.check is not None:  # a check run just started (or failed) outranks old ones
        state.check = given.check
        state.report_digest, state.inputs_digest = given.report_digest, given.inputs_digest
    return state


def reconcile_review(state: PrState, journal: Journal, owner: str, repo: str, number: int,
                     head: str, bot_login: str) -> Flow[None]:
    """Take in the head's review when a previous run posted it (or may have)."""
    step = review_step(head)
    entry = journal.entries().get(step)
    if entry is None or head in state.review_shas:
        return
    if entry.result is not None:
        fingerprints = [str(fp) for fp in entry.result.get("fingerprints") or []]
    else:  # the post was in flight: look for it by its marker
        reviews = yield from _reviews(owner, repo, number)
        found = [r for r in reviews if isinstance(r, dict) and _by(r, bot_login)
                 and markers.is_review(r.get("body") or "") and str(r.get("commit_id")) == head]
        if not found:
            return
        fingerprints = [fp for r in found for fp in markers.fingerprints_in(r.get("body") or "")]
        journal.record(step, {"id": int(found[0]["id"]), "fingerprints": fingerprints})
    state.posted.extend(fp for fp in fingerprints if fp not in state.posted)
    state.review_shas.append(head)


def reconcile_summary(state: PrState, journal: Journal, owner: str, repo: str, number: int,
                      bot_login: str) -> Flow[None]:
    """Take in the summary comment when a previous run created it (or may have)."""
    entry = journal.entries().get(SUMMARY_STEP)
    if entry is None or state.summary_id is not None:
        return
    if entry.result is not None:
        state.summary_id = int(entry.result["id"])
        state.summary_digest = entry.result.get("digest")
        return
    summary = _our_summary((yield from _comments(owner, repo, number)), bot_login)
    if summary is None:
        return
    state.summary_id = int(summary["id"])
    state.summary_digest = digest(markers.without_state(summary.get("body") or ""))
    journal.record(SUMMARY_STEP, {"id": state.summary_id, "digest": state.summary_digest})
