"""Flows for talking back in a PR conversation: reactions, replies, permissions."""

from __future__ import annotations

from urllib.parse import quote

from bot.github.calls import ApiCall, Flow, GitHubError, paginate, repo_path

MAX_REPLY_CHARS = 60_000  # GitHub refuses comment bodies over 65,536 characters


def react(owner: str, repo: str, comment_id: int, content: str) -> Flow[int]:
    """Add a reaction (200: it was already there, 201: created)."""
    call = ApiCall(
        "POST", f"{repo_path(owner, repo)}/issues/comments/{comment_id}/reactions",
        body={"content": content}, operation="reactions/create-for-issue-comment",
    )
    result = yield call
    return result.status


def reply(owner: str, repo: str, number: int, body: str) -> Flow[int | None]:
    """Post a comment on the PR conversation; the new comment's id."""
    if len(body) > MAX_REPLY_CHARS:
        body = body[: MAX_REPLY_CHARS - 40] + "\n\n… (reply truncated)"
    call = ApiCall(
        "POST", f"{repo_path(owner, repo)}/issues/{number}/comments", body={"body": body},
        operation="issues/create-comment",
    )
    result = yield call
    if result.status != 201:
        raise GitHubError(call, result)
    return result.data.get("id") if isinstance(result.data, dict) else None


def permission(owner: str, repo: str, user: str) -> Flow[str]:
    """The user's permission: admin, write (incl. maintain), read or none."""
    call = ApiCall(
        "GET", f"{repo_path(owner, repo)}/collaborators/{quote(user, safe='')}/permission",
        operation="repos/get-collaborator-permission-level",
    )
    result = yield call
    if result.status == 404:
        return "none"  # not a collaborator
    if result.status != 200 or not isinstance(result.data, dict):
        raise GitHubError(call, result)
    role = str(result.data.get("role_name") or "")
    level = str(result.data.get("permission") or "none")
    return "maintain" if role == "maintain" else level


def find_reply(owner: str, repo: str, number: int, marker: str, bot_login: str
               ) -> Flow[int | None]:
    """The id of the bot's own comment carrying `marker`, if there is one (a marker
    in anyone else's comment proves nothing)."""
    comments = yield from paginate(f"{repo_path(owner, repo)}/issues/{number}/comments",
                                   "issues/list-comments")
    for comment in comments:
        login = str((comment.get("user") or {}).get("login", ""))
        if login.lower() == bot_login.lower() and marker in str(comment.get("body") or ""):
            return int(comment["id"])
    return None
