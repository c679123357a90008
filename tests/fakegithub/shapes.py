"""GitHub-shaped JSON built from the fake's state.

API URLs point at the fake (clients such as PyGithub follow `url` fields for later
calls); `html_url`s keep github.com, as a real bot would render them.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import datetime
from typing import Any

from . import spec
from .state import (
    EPOCH,
    CheckRun,
    Commit,
    IssueComment,
    PullFile,
    PullRequest,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    State,
)

HTML = "https://github.com"
REACTION_KEYS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket")


def iso(moment: datetime | None) -> str | None:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def user_id(login: str) -> int:
    return int(hashlib.sha1(login.encode()).hexdigest()[:7], 16)


def node_id(kind: str, number: int) -> str:
    return base64.b64encode(f"0{len(kind)}:{kind}{number}".encode()).decode()


def _retarget(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_retarget(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _retarget(v, old, new) for k, v in value.items()}
    return value


class Shapes:
    def __init__(self, api_url: str, state: State) -> None:
        self.api = api_url.rstrip("/")
        self.state = state

    def repo_api(self, full_name: str) -> str:
        return f"{self.api}/repos/{full_name}"

    def user(self, login: str, user_type: str = "User") -> dict[str, Any]:
        ident = user_id(login)
        url = f"{self.api}/users/{login}"
        return {
            "login": login, "id": ident, "node_id": node_id("User", ident),
            "avatar_url": f"https://avatars.githubusercontent.com/u/{ident}?v=4",
            "gravatar_id": "", "url": url, "html_url": f"{HTML}/{login}",
            "followers_url": f"{url}/followers",
            "following_url": f"{url}/following{{/other_user}}",
            "gists_url": f"{url}/gists{{/gist_id}}",
            "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{url}/subscriptions",
            "organizations_url": f"{url}/orgs", "repos_url": f"{url}/repos",
            "events_url": f"{url}/events{{/privacy}}",
            "received_events_url": f"{url}/received_events",
            "type": user_type, "site_admin": False,
        }

    def repo(self, repo: Repo) -> dict[str, Any]:
        # GitHub's 73-field repository object: take the documented example and retarget it.
        template = spec.response_example("pulls/get")["base"]["repo"]
        template = _retarget(template, "https://api.github.com", self.api)
        template = _retarget(template, "octocat/Hello-World", repo.full_name)
        template.update(
            id=repo.id, node_id=node_id("Repository", repo.id), name=repo.name,
            full_name=repo.full_name, owner=self.user(repo.owner), private=repo.private,
            visibility="private" if repo.private else "public",
            default_branch=repo.default_branch, description=None, homepage=None,
            mirror_url=None, fork=False, topics=[], license=None,
        )
        template.pop("temp_clone_token", None)
        return dict(template)

    def app(self) -> dict[str, Any]:
        app = self.state.app
        assert app is not None
        return {
            "id": app.app_id, "slug": app.slug, "node_id": node_id("App", app.app_id),
            "client_id": f"Iv1.{app.app_id:016x}", "owner": self.user(app.owner, "Organization"),
            "name": app.name, "description": "", "external_url": "https://example.invalid",
            "html_url": f"{HTML}/apps/{app.slug}", "created_at": iso(EPOCH),
            "updated_at": iso(EPOCH), "permissions": {}, "events": [],
        }

    def _branch(self, pr: PullRequest, side: str) -> dict[str, Any]:
        repo_name = pr.repo if side == "base" or pr.head_repo is None else pr.head_repo
        repo = self.state.repos.get(repo_name)
        ref, sha = (pr.base_ref, pr.base_sha) if side == "base" else (pr.head_ref, pr.head_sha)
        owner = repo_name.split("/")[0]
        return {
            "label": f"{owner}:{ref}", "ref": ref, "sha": sha, "user": self.user(owner),
            # A PR from a deleted fork has `repo: null` on github.com.
            "repo": self.repo(repo) if repo is not None else None,
        }

    def pull(self, pr: PullRequest, *, full: bool = True) -> dict[str, Any]:
        url = f"{self.repo_api(pr.repo)}/pulls/{pr.number}"
        html = f"{HTML}/{pr.repo}/pull/{pr.number}"
        issue = f"{self.repo_api(pr.repo)}/issues/{pr.number}"
        statuses = f"{self.repo_api(pr.repo)}/statuses/{pr.head_sha}"
        data: dict[str, Any] = {
            "url": url, "id": pr.id, "node_id": node_id("PullRequest", pr.id),
            "html_url": html, "diff_url": f"{html}.diff", "patch_url": f"{html}.patch",
            "issue_url": issue, "commits_url": f"{url}/commits",
            "review_comments_url": f"{url}/comments",
            "review_comment_url": f"{self.repo_api(pr.repo)}/pulls/comments{{/number}}",
            "comments_url": f"{issue}/comments", "statuses_url": statuses,
            "number": pr.number, "state": pr.state, "locked": False, "title": pr.title,
            "user": self.user(pr.user), "body": pr.body,
            "labels": [self.label(pr.repo, name) for name in pr.labels],
            "milestone": None, "active_lock_reason": None,
            "created_at": iso(pr.created_at), "updated_at": iso(pr.updated_at),
            "closed_at": iso(pr.closed_at), "merged_at": iso(pr.merged_at),
            "merge_commit_sha": None, "assignee": None, "assignees": [],
            "requested_reviewers": [], "requested_teams": [],
            "head": self._branch(pr, "head"), "base": self._branch(pr, "base"),
            "_links": {
                "self": {"href": url}, "html": {"href": html}, "issue": {"href": issue},
                "comments": {"href": f"{issue}/comments"},
                "review_comments": {"href": f"{url}/comments"},
                "review_comment": {"href": f"{self.repo_api(pr.repo)}/pulls/comments{{/number}}"},
                "commits": {"href": f"{url}/commits"}, "statuses": {"href": statuses},
            },
            "author_association": pr.author_association, "auto_merge": None, "draft": pr.draft,
        }
        if full:
            data.update(
                merged=pr.merged_at is not None, mergeable=None, rebaseable=None,
                mergeable_state="unknown", merged_by=None, maintainer_can_modify=False,
                comments=sum(1 for _ in self.state.comments_on(pr.repo, pr.number)),
                review_comments=sum(
                    len(r.comments) for r in self.state.reviews_on(pr.repo, pr.number)
                ),
                commits=max(1, len(pr.commits)), changed_files=len(pr.files),
                additions=sum(f.additions or 0 for f in pr.files),
                deletions=sum(f.deletions or 0 for f in pr.files),
            )
        return data

    def label(self, full_name: str, name: str) -> dict[str, Any]:
        ident = user_id(f"{full_name}#{name}")
        return {
            "id": ident, "node_id": node_id("Label", ident), "name": name,
            "url": f"{self.repo_api(full_name)}/labels/{name}", "color": "ededed",
            "default": False, "description": None,
        }

    def diff_entry(self, pr: PullRequest, item: PullFile) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "sha": item.sha, "filename": item.filename, "status": item.status,
            "additions": item.additions, "deletions": item.deletions, "changes": item.changes,
            "blob_url": f"{HTML}/{pr.repo}/blob/{pr.head_sha}/{item.filename}",
            "raw_url": f"{HTML}/{pr.repo}/raw/{pr.head_sha}/{item.filename}",
            "contents_url": f"{self.repo_api(pr.repo)}/contents/{item.filename}?ref={pr.head_sha}",
        }
        if item.patch is not None:  # GitHub omits the key for binary or huge diffs
            entry["patch"] = item.patch
        if item.previous_filename is not None:
            entry["previous_filename"] = item.previous_filename
        return entry

    def commit(self, full_name: str, commit: Commit) -> dict[str, Any]:
        url = f"{self.repo_api(full_name)}/commits/{commit.sha}"
        person = {"name": commit.author, "email": f"{commit.author}@example.com",
                  "date": iso(EPOCH)}
        return {
            "url": url, "sha": commit.sha, "node_id": node_id("Commit", user_id(commit.sha)),
            "html_url": f"{HTML}/{full_name}/commit/{commit.sha}",
            "comments_url": f"{url}/comments",
            "commit": {
                "url": f"{self.repo_api(full_name)}/git/commits/{commit.sha}",
                "author": person, "committer": person, "message": commit.message,
                "tree": {"sha": commit.sha, "url": f"{self.repo_api(full_name)}/git/trees/x"},
                "comment_count": 0,
                "verification": {"verified": False, "reason": "unsigned", "signature": None,
                                 "payload": None, "verified_at": None},
            },
            "author": self.user(commit.author), "committer": self.user(commit.author),
            "parents": [{"sha": p, "url": f"{self.repo_api(full_name)}/commits/{p}"}
                        for p in commit.parents],
        }

    def reaction(self, reaction: Reaction) -> dict[str, Any]:
        return {
            "id": reaction.id, "node_id": node_id("Reaction", reaction.id),
            "user": self.user(reaction.user, reaction.user_type), "content": reaction.content,
            "created_at": iso(reaction.created_at),
        }

    def _rollup(self, url: str, reactions: list[Reaction]) -> dict[str, Any]:
        rollup: dict[str, Any] = {"url": f"{url}/reactions", "total_count": len(reactions)}
        rollup.update({k: sum(r.content == k for r in reactions) for k in REACTION_KEYS})
        return rollup

    def review_comment(self, review: Review, comment: ReviewComment) -> dict[str, Any]:
        pull_url = f"{self.repo_api(review.repo)}/pulls/{review.pull_number}"
        url = f"{self.repo_api(review.repo)}/pulls/comments/{comment.id}"
        html = f"{HTML}/{review.repo}/pull/{review.pull_number}#discussion_r{comment.id}"
        return {
            "url": url, "id": comment.id, "node_id": node_id("PullRequestReviewComment",
                                                             comment.id),
            "pull_request_review_id": review.id, "diff_hunk": "", "path": comment.path,
            # GitHub omits the placement keys a comment does not use.
            **{k: v for k, v in (("position", comment.position), ("line", comment.line),
                                 ("side", comment.side), ("start_line", comment.start_line),
                                 ("start_side", comment.start_side)) if v is not None},
            "commit_id": review.commit_id, "original_commit_id": review.commit_id,
            "user": self.user(review.user, review.user_type), "body": comment.body,
            "created_at": iso(review.submitted_at), "updated_at": iso(review.submitted_at),
            "html_url": html, "pull_request_url": pull_url,
            "author_association": review.author_association,
            "_links": {"self": {"href": url}, "html": {"href": html},
                       "pull_request": {"href": pull_url}},
            "reactions": self._rollup(url, comment.reactions),
        }

    def issue_comment(self, comment: IssueComment) -> dict[str, Any]:
        url = f"{self.repo_api(comment.repo)}/issues/comments/{comment.id}"
        rollup: dict[str, Any] = {"url": f"{url}/reactions",
                                  "total_count": len(comment.reactions)}
        rollup.update({k: sum(r.content == k for r in comment.reactions) for k in REACTION_KEYS})
        return {
            "id": comment.id, "node_id": node_id("IssueComment", comment.id), "url": url,
            "html_url": f"{HTML}/{comment.repo}/pull/{comment.issue_number}"
                        f"#issuecomment-{comment.id}",
            "body": comment.body, "user": self.user(comment.user, comment.user_type),
            "created_at": iso(comment.created_at), "updated_at": iso(comment.updated_at),
            "issue_url": f"{self.repo_api(comment.repo)}/issues/{comment.issue_number}",
            "author_association": comment.author_association,
            "performed_via_github_app": self.app() if comment.via_app else None,
            "reactions": rollup,
        }

    def review(self, review: Review) -> dict[str, Any]:
        pull_url = f"{self.repo_api(review.repo)}/pulls/{review.pull_number}"
        html = f"{HTML}/{review.repo}/pull/{review.pull_number}#pullrequestreview-{review.id}"
        return {
            "id": review.id, "node_id": node_id("PullRequestReview", review.id),
            "user": self.user(review.user, review.user_type), "body": review.body,
            "state": review.state, "html_url": html, "pull_request_url": pull_url,
            "_links": {"html": {"href": html}, "pull_request": {"href": pull_url}},
            "submitted_at": iso(review.submitted_at), "commit_id": review.commit_id,
            "author_association": review.author_association,
        }

    def check_run(self, run: CheckRun) -> dict[str, Any]:
        url = f"{self.repo_api(run.repo)}/check-runs/{run.id}"
        prs = [
            {"url": f"{self.repo_api(pr.repo)}/pulls/{pr.number}", "id": pr.id,
             "number": pr.number,
             "head": {"ref": pr.head_ref, "sha": pr.head_sha, "repo": self._mini(pr.repo)},
             "base": {"ref": pr.base_ref, "sha": pr.base_sha, "repo": self._mini(pr.repo)}}
            for pr in self.state.pulls.values()
            # Fork PRs are not listed: checks only see pushes to the suite's own repo.
            if pr.repo == run.repo and pr.head_sha == run.head_sha and pr.head_repo is None
        ]
        return {
            "id": run.id, "head_sha": run.head_sha, "node_id": node_id("CheckRun", run.id),
            "external_id": run.external_id or "", "url": url,
            "html_url": f"{HTML}/{run.repo}/runs/{run.id}",
            "details_url": run.details_url or f"{HTML}/{run.repo}/runs/{run.id}",
            "status": run.status, "conclusion": run.conclusion,
            "started_at": iso(run.started_at), "completed_at": iso(run.completed_at),
            "output": {**run.output, "annotations_count": len(run.annotations),
                       "annotations_url": f"{url}/annotations"},
            "name": run.name, "check_suite": {"id": run.check_suite_id}, "app": self.app(),
            "pull_requests": prs,
        }

    def _mini(self, full_name: str) -> dict[str, Any]:
        repo = self.state.repos[full_name]
        return {"id": repo.id, "url": self.repo_api(full_name), "name": repo.name}
