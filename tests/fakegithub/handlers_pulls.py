"""Pull-request operations, including GitHub's review-comment placement rules."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .context import Ctx, Handler
from .errors import ApiError, Reply, not_found, unprocessable
from .shapes import HTML
from .state import Commit, PullRequest, Review, ReviewComment

MAX_LISTED_FILES = 3000
MAX_LISTED_COMMITS = 250
MAX_DIFF_FILES = 300
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_REVIEW_STATES = {
    None: "PENDING", "COMMENT": "COMMENTED", "APPROVE": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
}


@dataclass
class DiffMap:
    """Which lines of a patch a review comment may target, per side, and their hunk."""

    hunk_of: dict[tuple[str, int], int] = field(default_factory=dict)
    positions: int = 0

    @classmethod
    def parse(cls, patch: str) -> DiffMap:
        mapping = cls()
        old = new = hunk = 0
        for index, line in enumerate(patch.rstrip("\n").split("\n")):
            found = _HUNK.match(line)
            if found:
                old, new, hunk = int(found[1]), int(found[2]), hunk + 1
            elif hunk:
                if line.startswith("-"):
                    mapping.hunk_of[("LEFT", old)] = hunk
                    old += 1
                elif line.startswith("+"):
                    mapping.hunk_of[("RIGHT", new)] = hunk
                    new += 1
                elif not line.startswith("\\"):
                    mapping.hunk_of[("LEFT", old)] = mapping.hunk_of[("RIGHT", new)] = hunk
                    old, new = old + 1, new + 1
            mapping.positions = index
        return mapping


def _head_label(pr: PullRequest) -> str:
    return f"{(pr.head_repo or pr.repo).split('/')[0]}:{pr.head_ref}"


def list_pulls(ctx: Ctx) -> Reply:
    state = ctx.query.get("state", "open")
    pulls = [
        pr for (repo, _), pr in ctx.state.pulls.items()
        if repo == ctx.full_name and state in {"all", pr.state}
        and ctx.query.get("base") in {None, pr.base_ref}
        and ctx.query.get("head") in {None, _head_label(pr)}
    ]
    sort = ctx.query.get("sort", "created")
    key: Callable[[PullRequest], datetime] = (
        (lambda p: p.updated_at) if sort == "updated" else (lambda p: p.created_at)
    )
    default_direction = "desc" if sort == "created" else "asc"
    descending = ctx.query.get("direction", default_direction) == "desc"
    pulls.sort(key=lambda p: (key(p), p.number), reverse=descending)
    return ctx.paged_reply(pulls, lambda p: ctx.shapes.pull(p, full=False))


def _unified_diff(pr: PullRequest) -> str:
    chunks = []
    for item in pr.files:
        old = item.previous_filename or item.filename
        old_side = "/dev/null" if item.status == "added" else f"a/{old}"
        new_side = "/dev/null" if item.status == "removed" else f"b/{item.filename}"
        chunks.append(f"diff --git a/{old} b/{item.filename}\n--- {old_side}\n+++ {new_side}\n")
        if item.patch:
            chunks.append(item.patch.rstrip("\n") + "\n")
    return "".join(chunks)


def get_pull(ctx: Ctx) -> Reply:
    pr = ctx.pull()
    if "diff" in ctx.accept or "patch" in ctx.accept:
        if len(pr.files) > MAX_DIFF_FILES:
            raise ApiError(
                406,
                "Sorry, the diff exceeded the maximum number of files (300). Consider using "
                "'List pull requests files' API or locally cloning the repository instead.",
                errors=[{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
            )
        return Reply(raw=_unified_diff(pr).encode(), content_type="text/plain; charset=utf-8")
    return Reply(json=ctx.shapes.pull(pr))


def list_files(ctx: Ctx) -> Reply:
    pr = ctx.pull()
    return ctx.paged_reply(
        pr.files[:MAX_LISTED_FILES], lambda f: ctx.shapes.diff_entry(pr, f)
    )


def compare_commits(ctx: Ctx) -> Reply:
    """`base...head` of a pull request the fake knows (git is not modelled: the files
    are that PR's). Files: up to 300, and only on the first page when paging; commits:
    250 without paging parameters, else `per_page` of them."""
    base, dots, head = ctx.params["basehead"].partition("...")
    pr = next((p for (name, _), p in ctx.state.pulls.items()
               if name == ctx.full_name and p.base_sha == base and p.head_sha == head), None)
    if not dots or pr is None:
        raise not_found()
    commits = pr.commits or [Commit(pr.head_sha, parents=(pr.base_sha,))]
    paging = "per_page" in ctx.query or "page" in ctx.query
    chunk, total = ctx.page(commits) if paging else (commits[:250], len(commits))
    first_page = not paging or int(ctx.query.get("page", 1)) == 1
    api = ctx.shapes.repo_api(ctx.full_name)
    html = f"{HTML}/{ctx.full_name}/compare/{base}...{head}"
    base_commit = ctx.shapes.commit(ctx.full_name, Commit(base))
    answer: dict[str, Any] = {
        "url": f"{api}/compare/{base}...{head}", "html_url": html, "permalink_url": html,
        "diff_url": f"{html}.diff", "patch_url": f"{html}.patch",
        "base_commit": base_commit, "merge_base_commit": base_commit, "status": "ahead",
        "ahead_by": len(commits), "behind_by": 0, "total_commits": len(commits),
        "commits": [ctx.shapes.commit(ctx.full_name, c) for c in chunk],
    }
    if first_page:
        answer["files"] = [ctx.shapes.diff_entry(pr, f) for f in pr.files[:MAX_DIFF_FILES]]
    return Reply(json=answer, paginated_total=total if paging else None)


def list_commits(ctx: Ctx) -> Reply:
    pr = ctx.pull()
    commits = pr.commits or [Commit(pr.head_sha, parents=(pr.base_sha,))]
    return ctx.paged_reply(
        commits[:MAX_LISTED_COMMITS], lambda c: ctx.shapes.commit(pr.repo, c)
    )


def list_reviews(ctx: Ctx) -> Reply:
    pr = ctx.pull()
    visible = [
        r for r in ctx.state.reviews_on(pr.repo, pr.number)
        if r.state != "PENDING" or r.user == ctx.principal.login
    ]
    return ctx.paged_reply(visible, ctx.shapes.review)


def _place_comment(pr: PullRequest, raw: dict[str, Any], review_id: int, new_id: int
                   ) -> ReviewComment:
    target = next((f for f in pr.files if f.filename == raw["path"]), None)
    if target is None:
        raise unprocessable("Unprocessable Entity", "Path could not be resolved")
    if not target.patch:
        raise unprocessable(
            "Unprocessable Entity", "Pull request review thread diff hunk can't be blank"
        )
    diff = DiffMap.parse(target.patch)
    side = raw.get("side", "RIGHT")
    start_side = raw.get("start_side", side)
    if side not in {"LEFT", "RIGHT"} or start_side not in {"LEFT", "RIGHT"}:
        raise unprocessable("Unprocessable Entity", "side must be LEFT or RIGHT")
    if "line" in raw:
        hunk = diff.hunk_of.get((side, raw["line"]))
        if hunk is None:
            raise unprocessable("Unprocessable Entity", "Line could not be resolved")
        if "start_line" in raw:
            start_hunk = diff.hunk_of.get((start_side, raw["start_line"]))
            if raw["start_line"] >= raw["line"] and start_side == side:
                raise unprocessable("Unprocessable Entity", "start_line must precede line")
            if start_hunk != hunk:
                raise unprocessable(
                    "Unprocessable Entity", "Start line must be part of the same hunk as the line"
                )
    elif "position" in raw:
        if not 1 <= raw["position"] <= diff.positions:
            raise unprocessable("Unprocessable Entity", "Position could not be resolved")
    else:
        raise unprocessable("Unprocessable Entity", "Either line or position is required")
    return ReviewComment(
        id=new_id, review_id=review_id, path=raw["path"], body=raw["body"],
        line=raw.get("line"), side=side if "line" in raw else None,
        start_line=raw.get("start_line"),
        start_side=start_side if "start_line" in raw else None, position=raw.get("position"),
    )


def create_review(ctx: Ctx) -> Reply:
    pr = ctx.pull()
    body, event = ctx.body.get("body"), ctx.body.get("event")
    login, user_type = ctx.acting_user()
    state = _REVIEW_STATES[event]
    commit_id = ctx.body.get("commit_id", pr.head_sha)
    if commit_id not in {pr.head_sha, *(c.sha for c in pr.commits)}:
        raise unprocessable("Unprocessable Entity", "commit_id is not part of the pull request")
    comments = ctx.body.get("comments", [])
    if event in {"COMMENT", "REQUEST_CHANGES"} and not body and not comments:
        raise unprocessable(
            "Unprocessable Entity", f"Review body is required for {event} events"
        )
    if event in {"APPROVE", "REQUEST_CHANGES"} and login == pr.user:
        raise unprocessable("Unprocessable Entity", "Can not approve or request changes on your "
                            "own pull request")
    if state == "PENDING" and any(
        r.state == "PENDING" and r.user == login for r in ctx.state.reviews_on(pr.repo, pr.number)
    ):
        raise unprocessable(
            "Unprocessable Entity", "User can only have one pending review per pull request"
        )
    review_id = ctx.state.ids.next("review")
    placed = [
        _place_comment(pr, raw, review_id, ctx.state.ids.next("review_comment"))
        for raw in comments
    ]
    review = Review(
        id=review_id, repo=pr.repo, pull_number=pr.number, user=login, user_type=user_type,
        body=body or "", state=state, commit_id=commit_id,
        submitted_at=None if state == "PENDING" else ctx.now, comments=placed,
    )
    ctx.state.reviews[review.id] = review
    pr.updated_at = ctx.now
    # GitHub answers 200 here, not 201.
    return Reply(status=200, json=ctx.shapes.review(review))


def _visible_reviews(ctx: Ctx, pr: PullRequest) -> list[Review]:
    return [r for r in ctx.state.reviews_on(pr.repo, pr.number)
            if r.state != "PENDING" or r.user == ctx.principal.login]


def list_review_comments(ctx: Ctx) -> Reply:
    pr = ctx.pull()
    placed = [(r, c) for r in _visible_reviews(ctx, pr) for c in r.comments]
    return ctx.paged_reply(placed, lambda rc: ctx.shapes.review_comment(*rc))


def list_review_comment_reactions(ctx: Ctx) -> Reply:
    wanted = ctx.int_param("comment_id")
    found = next((c for r in ctx.state.reviews.values() if r.repo == ctx.full_name
                  for c in r.comments if c.id == wanted), None)
    if found is None:
        raise not_found()
    content = ctx.query.get("content")
    reactions = [x for x in found.reactions if content is None or x.content == content]
    return ctx.paged_reply(reactions, ctx.shapes.reaction)


HANDLERS: dict[str, Handler] = {
    "pulls/list": list_pulls,
    "pulls/get": get_pull,
    "pulls/list-files": list_files,
    "repos/compare-commits-with-basehead": compare_commits,
    "pulls/list-commits": list_commits,
    "pulls/list-reviews": list_reviews,
    "pulls/create-review": create_review,
    "pulls/list-review-comments": list_review_comments,
    "reactions/list-for-pull-request-review-comment": list_review_comment_reactions,
}
