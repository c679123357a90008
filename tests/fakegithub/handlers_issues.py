"""Issue comments, reactions, collaborator permissions and issue search."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from .context import Ctx, Handler
from .errors import ApiError, Reply, not_found, unprocessable
from .search_query import parse_query
from .shapes import iso
from .state import IssueComment, PullRequest, Reaction

MAX_COMMENT_BODY = 65536
MAX_SEARCH_RESULTS = 1000
# GitHub's mapping from a repository role to the legacy `permission` field.
ROLE_TO_PERMISSION = {
    "admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read",
    "none": "none",
}


def _check_body_length(body: str) -> None:
    if len(body) > MAX_COMMENT_BODY:
        raise unprocessable(
            "Validation Failed",
            {"resource": "IssueComment", "code": "custom", "field": "body",
             "message": "body is too long (maximum is 65536 characters)"},
        )


def _issue(ctx: Ctx) -> PullRequest:
    # The fake only models pull requests; on GitHub every PR is also an issue.
    return ctx.pull(ctx.int_param("issue_number"))


def _comment(ctx: Ctx) -> IssueComment:
    comment = ctx.state.comments.get(ctx.int_param("comment_id"))
    if comment is None or comment.repo != ctx.full_name:
        raise not_found()
    return comment


def list_comments(ctx: Ctx) -> Reply:
    pr = _issue(ctx)
    comments = list(ctx.state.comments_on(pr.repo, pr.number))
    if "since" in ctx.query:
        since = datetime.fromisoformat(str(ctx.query["since"]).replace("Z", "+00:00"))
        comments = [c for c in comments if c.updated_at >= since]
    return ctx.paged_reply(comments, ctx.shapes.issue_comment)


def create_comment(ctx: Ctx) -> Reply:
    pr = _issue(ctx)
    _check_body_length(ctx.body["body"])
    login, user_type = ctx.acting_user()
    comment = IssueComment(
        id=ctx.state.ids.next("comment"), repo=pr.repo, issue_number=pr.number,
        body=ctx.body["body"], user=login, user_type=user_type, created_at=ctx.now,
        updated_at=ctx.now, via_app=ctx.principal.kind == "installation",
    )
    ctx.state.comments[comment.id] = comment
    pr.updated_at = ctx.now
    rendered = ctx.shapes.issue_comment(comment)
    return Reply(status=201, json=rendered, headers={"Location": rendered["url"]})


def update_comment(ctx: Ctx) -> Reply:
    comment = _comment(ctx)
    _check_body_length(ctx.body["body"])
    comment.body = ctx.body["body"]
    comment.updated_at = ctx.now
    return Reply(json=ctx.shapes.issue_comment(comment))


def create_reaction(ctx: Ctx) -> Reply:
    comment = _comment(ctx)
    login, user_type = ctx.acting_user()
    content = ctx.body["content"]
    existing = next(
        (r for r in comment.reactions if r.user == login and r.content == content), None
    )
    if existing is not None:
        return Reply(status=200, json=ctx.shapes.reaction(existing))
    reaction = Reaction(ctx.state.ids.next("reaction"), content, login, user_type, ctx.now)
    comment.reactions.append(reaction)
    return Reply(status=201, json=ctx.shapes.reaction(reaction))


def collaborator_permission(ctx: Ctx) -> Reply:
    assert ctx.repo is not None
    username = ctx.params["username"]
    default = ("none", "none") if ctx.repo.private else ("read", "read")
    permission, role_name = ctx.repo.collaborators.get(username, default)
    user = ctx.shapes.user(username) | {
        "role_name": role_name,
        "permissions": {
            "admin": permission == "admin", "maintain": role_name in {"admin", "maintain"},
            "push": permission in {"admin", "write"},
            "triage": permission in {"admin", "write"} or role_name == "triage",
            "pull": permission != "none",
        },
    }
    return Reply(json={"permission": permission, "role_name": role_name, "user": user})


def _search_item(ctx: Ctx, pr: PullRequest) -> dict[str, Any]:
    full = ctx.shapes.pull(pr, full=False)
    repo_url = ctx.shapes.repo_api(pr.repo)
    issue_url = f"{repo_url}/issues/{pr.number}"
    return {
        "url": issue_url, "repository_url": repo_url,
        "labels_url": f"{issue_url}/labels{{/name}}", "comments_url": f"{issue_url}/comments",
        "events_url": f"{issue_url}/events", "html_url": full["html_url"], "id": pr.id,
        "node_id": full["node_id"], "number": pr.number, "title": pr.title,
        "user": full["user"], "labels": full["labels"], "state": pr.state, "locked": False,
        "assignee": None, "assignees": [], "milestone": None,
        "comments": sum(1 for _ in ctx.state.comments_on(pr.repo, pr.number)),
        "created_at": iso(pr.created_at), "updated_at": iso(pr.updated_at),
        "closed_at": iso(pr.closed_at), "author_association": pr.author_association,
        "active_lock_reason": None, "draft": pr.draft, "body": pr.body, "score": 1.0,
        "state_reason": None,
        "pull_request": {
            "url": full["url"], "html_url": full["html_url"], "diff_url": full["diff_url"],
            "patch_url": full["patch_url"], "merged_at": iso(pr.merged_at),
        },
    }


def search_issues(ctx: Ctx) -> Reply:
    try:
        query = parse_query(str(ctx.query["q"]))
    except ValueError as exc:
        raise unprocessable("Validation Failed", {"message": str(exc), "resource": "Search",
                                                  "field": "q", "code": "invalid"}) from exc
    if not query.names_kind:
        raise unprocessable(
            "Query must include 'is:issue' or 'is:pull-request'",
            {"resource": "Search", "field": "q", "code": "invalid"},
        )
    hidden = [r for r in query.repos if not ctx.principal.can_see(ctx.state, r)
              or r not in ctx.state.repos]
    if hidden:
        raise ApiError(
            422, "Validation Failed",
            errors=[{"message": "The listed users and repositories cannot be searched either "
                     "because the resources do not exist or you do not have permission to "
                     "view them.", "resource": "Search", "field": "q", "code": "invalid"}],
        )
    found = [
        pr for pr in ctx.state.pulls.values()
        if ctx.principal.can_see(ctx.state, pr.repo) and query.matches(pr)
    ]
    sort = ctx.query.get("sort")
    keys: dict[str, Callable[[PullRequest], Any]] = {
        "created": lambda p: p.created_at,
        "updated": lambda p: p.updated_at,
        "comments": lambda p: sum(1 for _ in ctx.state.comments_on(p.repo, p.number)),
    }
    key = keys.get(str(sort), keys["updated"])
    found.sort(key=lambda p: (key(p), p.number), reverse=ctx.query.get("order", "desc") == "desc")
    chunk, _ = ctx.page(found[:MAX_SEARCH_RESULTS])
    return Reply(
        json={"total_count": len(found), "incomplete_results": False, "search_type": "lexical",
              "items": [_search_item(ctx, pr) for pr in chunk]},
        paginated_total=min(len(found), MAX_SEARCH_RESULTS),
    )


HANDLERS: dict[str, Handler] = {
    "issues/list-comments": list_comments,
    "issues/create-comment": create_comment,
    "issues/update-comment": update_comment,
    "reactions/create-for-issue-comment": create_reaction,
    "repos/get-collaborator-permission-level": collaborator_permission,
    "search/issues-and-pull-requests": search_issues,
}
