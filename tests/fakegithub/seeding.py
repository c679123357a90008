"""Helpers to seed the fake's world and to inspect what clients did to it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from .auth import generate_rsa_keypair, mint_installation_token
from .state import (
    DEFAULT_APP_PERMISSIONS,
    App,
    CheckRun,
    Commit,
    Installation,
    IssueComment,
    Job,
    PullFile,
    PullRequest,
    Reaction,
    Repo,
    Review,
    State,
    Token,
    WorkflowRun,
    fake_sha,
)

ROLE_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read",
                   "read": "read", "none": "none"}


class Seeding:
    state: State

    def now(self) -> datetime:
        raise NotImplementedError

    def repo(self, full_name: str) -> Repo:
        """The repository, created on first mention (owner/name, case-insensitive)."""
        for name, repo in self.state.repos.items():
            if name.lower() == full_name.lower():
                return repo
        return self.add_repo(full_name)

    def add_repo(self, full_name: str, *, repo_id: int | None = None,
                 default_branch: str = "main", private: bool = False) -> Repo:
        owner, name = full_name.split("/")
        repo = Repo(owner, name, repo_id or self.state.ids.next("repo"), default_branch, private)
        repo.files.setdefault(default_branch, {})
        self.state.repos[full_name] = repo
        return repo

    def register_app(self, app_id: int, public_key_pem: str, *, slug: str = "ci-stability-bot",
                     name: str = "CI stability bot") -> App:
        self.state.app = App(app_id, slug, name, public_key_pem)
        return self.state.app

    def create_app(self, app_id: int = 424242, *, slug: str = "ci-stability-bot") -> str:
        """Register an App with a fresh key pair; returns its private key PEM."""
        private_pem, public_pem = generate_rsa_keypair()
        self.register_app(app_id, public_pem, slug=slug)
        return private_pem

    def add_installation(self, installation_id: int, repos: Iterable[str] | None, *,
                         account: str | None = None, permissions: dict[str, str] | None = None
                         ) -> Installation:
        """`repos=None` installs on all of the account's repositories."""
        names = None if repos is None else {self.repo(r).full_name for r in repos}
        account = account or (sorted(names)[0].split("/")[0] if names else "octo-org")
        installation = Installation(
            installation_id, account, names, dict(permissions or DEFAULT_APP_PERMISSIONS)
        )
        self.state.installations[installation_id] = installation
        return installation

    def issue_installation_token(self, installation_id: int) -> str:
        """A valid installation token without the JWT dance, for tests that skip auth."""
        return mint_installation_token(
            self.state, self.state.installations[installation_id], self.now()
        ).value

    def add_personal_token(self, token: str, login: str, *, repos: Iterable[str] | None = None,
                           expires_at: datetime | None = None) -> str:
        scope = None if repos is None else frozenset(self.repo(r).full_name for r in repos)
        self.state.tokens[token] = Token(token, "personal", login, "User", expires_at,
                                         repos=scope)
        return token

    def add_file(self, full_name: str, path: str, content: str | bytes, *,
                 ref: str | None = None) -> None:
        repo = self.repo(full_name)
        data = content.encode() if isinstance(content, str) else content
        repo.files.setdefault(ref or repo.default_branch, {})[path.strip("/")] = data

    def add_commit(self, full_name: str, sha: str) -> None:
        self.repo(full_name).commits.add(sha)

    def set_permission(self, full_name: str, login: str, role: str, *,
                       role_name: str | None = None) -> None:
        """`role`: admin, maintain, write, triage, read or none; `role_name` for custom roles."""
        self.repo(full_name).collaborators[login] = (ROLE_PERMISSION[role], role_name or role)

    def add_pull(self, full_name: str, number: int, *, title: str = "Update CI",
                 user: str = "contributor", head_sha: str | None = None,
                 base_sha: str | None = None, files: Iterable[PullFile | dict[str, Any]] = (),
                 commits: Iterable[Commit] = (), **fields: Any) -> PullRequest:
        repo = self.repo(full_name)
        pr = PullRequest(
            repo=repo.full_name, number=number, id=self.state.ids.next("pull"), title=title,
            user=user, head_sha=head_sha or fake_sha(repo.full_name, number, "head"),
            base_sha=base_sha or fake_sha(repo.full_name, number, "base"),
            files=[f if isinstance(f, PullFile) else PullFile(**f) for f in files],
            commits=list(commits), **fields,
        )
        self.state.pulls[(repo.full_name, number)] = pr
        return pr

    def add_comment(self, full_name: str, number: int, body: str, *, user: str = "octocat",
                    user_type: str = "User", via_app: bool = False) -> IssueComment:
        now = self.now()
        comment = IssueComment(self.state.ids.next("comment"), self.repo(full_name).full_name,
                               number, body, user, user_type, now, now, via_app)
        self.state.comments[comment.id] = comment
        return comment

    def react_to_review_comment(self, comment_id: int, user: str, content: str = "-1", *,
                                user_type: str = "User") -> Reaction:
        """A reaction on an inline review comment (GitHub sends no webhook for it)."""
        comment = next(c for r in self.state.reviews.values() for c in r.comments
                       if c.id == comment_id)
        reaction = Reaction(self.state.ids.next("reaction"), content, user, user_type,
                            self.now())
        comment.reactions.append(reaction)
        return reaction

    def add_workflow_run(self, full_name: str, *, head_sha: str, head_branch: str = "main",
                         name: str = "CI", **fields: Any) -> WorkflowRun:
        repo = self.repo(full_name)
        run = WorkflowRun(self.state.ids.next("run"), repo.full_name, name, head_sha,
                          head_branch, **fields)
        run.check_suite_id = run.check_suite_id or self.state.ids.next("check_suite")
        self.state.runs[run.id] = run
        return run

    def add_job(self, run_id: int, *, name: str, log: str | None = None, **fields: Any) -> Job:
        run = self.state.runs[run_id]
        job = Job(self.state.ids.next("job"), run_id, run.repo, name, log=log, **fields)
        self.state.jobs[job.id] = job
        return job

    def issue_comments(self, full_name: str, number: int) -> list[IssueComment]:
        return list(self.state.comments_on(self.repo(full_name).full_name, number))

    def reviews(self, full_name: str, number: int) -> list[Review]:
        return self.state.reviews_on(self.repo(full_name).full_name, number)

    def check_runs(self, full_name: str | None = None, head_sha: str | None = None
                   ) -> list[CheckRun]:
        return [
            run for run in sorted(self.state.check_runs.values(), key=lambda r: r.id)
            if full_name in {None, run.repo} and head_sha in {None, run.head_sha}
        ]
