"""The fake's world: plain mutable records that tests seed and inspect directly."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def git_blob_sha(content: bytes) -> str:
    """The SHA git (and therefore GitHub) gives a file's contents."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def fake_sha(*parts: object) -> str:
    return hashlib.sha1(repr(parts).encode()).hexdigest()


class IdAllocator:
    """Separate, far-apart ranges per kind, so a test that passes a comment id where a
    check-run id belongs gets a 404 instead of silently hitting another object."""

    _STARTS: ClassVar[dict[str, int]] = {
        "repo": 100_000_001, "pull": 200_000_001, "comment": 1_000_000_001,
        "review": 2_000_000_001, "review_comment": 3_000_000_001, "check_run": 4_000_000_001,
        "reaction": 5_000_000_001, "run": 6_000_000_001, "job": 7_000_000_001,
        "check_suite": 8_000_000_001, "user": 9_000_001,
    }

    def __init__(self) -> None:
        self._counters = {kind: itertools.count(start) for kind, start in self._STARTS.items()}

    def next(self, kind: str) -> int:
        return next(self._counters[kind])


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    default_branch: str = "main"
    private: bool = False
    # ref (branch name or commit SHA) -> path -> bytes
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)
    # login -> (permission, role_name)
    collaborators: dict[str, tuple[str, str]] = field(default_factory=dict)
    # commit SHAs the repository is known to contain (check runs need one)
    commits: set[str] = field(default_factory=set)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class App:
    app_id: int
    slug: str
    name: str
    public_key_pem: str
    owner: str = "ci-stability"

    @property
    def bot_login(self) -> str:
        return f"{self.slug}[bot]"


DEFAULT_APP_PERMISSIONS = {
    "metadata": "read", "contents": "read", "pull_requests": "write", "issues": "write",
    "checks": "write", "actions": "read", "members": "read",
}


@dataclass
class Installation:
    id: int
    account: str
    repos: set[str] | None  # None: repository_selection "all"
    permissions: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_APP_PERMISSIONS))
    suspended: bool = False

    def covers(self, full_name: str) -> bool:
        if self.repos is None:
            return full_name.split("/")[0].lower() == self.account.lower()
        return full_name in self.repos


@dataclass
class Token:
    value: str
    kind: str  # "installation" | "personal"
    login: str
    user_type: str  # "Bot" | "User"
    expires_at: datetime | None
    installation_id: int | None = None
    repos: frozenset[str] | None = None  # None: everything the installation/user can see
    permissions: dict[str, str] | None = None  # None: unrestricted (personal tokens)


@dataclass
class PullFile:
    filename: str
    patch: str | None = None
    status: str = "modified"
    previous_filename: str | None = None
    additions: int | None = None
    deletions: int | None = None
    changes: int | None = None
    sha: str | None = None

    def __post_init__(self) -> None:
        lines = (self.patch or "").splitlines()
        if self.additions is None:
            self.additions = sum(1 for ln in lines if ln.startswith("+"))
        if self.deletions is None:
            self.deletions = sum(1 for ln in lines if ln.startswith("-"))
        if self.changes is None:
            self.changes = self.additions + self.deletions
        if self.sha is None:
            self.sha = fake_sha(self.filename, self.patch)


@dataclass
class Commit:
    sha: str
    message: str = "Update"
    author: str = "octocat"
    parents: tuple[str, ...] = ()


@dataclass
class PullRequest:
    repo: str
    number: int
    id: int
    title: str
    user: str
    head_sha: str
    base_sha: str
    body: str | None = None
    draft: bool = False
    state: str = "open"
    base_ref: str = "main"
    head_ref: str = "feature"
    head_repo: str | None = None  # fork full name; None means the same repository
    labels: list[str] = field(default_factory=list)
    merged_at: datetime | None = None
    closed_at: datetime | None = None
    created_at: datetime = EPOCH
    updated_at: datetime = EPOCH
    files: list[PullFile] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    author_association: str = "CONTRIBUTOR"


@dataclass
class Reaction:
    id: int
    content: str
    user: str
    user_type: str
    created_at: datetime


@dataclass
class IssueComment:
    id: int
    repo: str
    issue_number: int
    body: str
    user: str
    user_type: str
    created_at: datetime
    updated_at: datetime
    via_app: bool = False
    author_association: str = "NONE"
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class ReviewComment:
    id: int
    review_id: int
    path: str
    body: str
    line: int | None
    side: str | None
    start_line: int | None
    start_side: str | None
    position: int | None
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Review:
    id: int
    repo: str
    pull_number: int
    user: str
    user_type: str
    body: str
    state: str
    commit_id: str
    submitted_at: datetime | None
    comments: list[ReviewComment] = field(default_factory=list)
    author_association: str = "NONE"


@dataclass
class CheckRun:
    id: int
    repo: str
    name: str
    head_sha: str
    status: str
    check_suite_id: int
    started_at: datetime
    conclusion: str | None = None
    completed_at: datetime | None = None
    details_url: str | None = None
    external_id: str | None = None
    output: dict[str, str | None] = field(
        default_factory=lambda: {"title": None, "summary": None, "text": None}
    )
    annotations: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    patch_count: int = 0


@dataclass
class WorkflowRun:
    id: int
    repo: str
    name: str
    head_sha: str
    head_branch: str
    workflow_id: int = 161335
    path: str = ".github/workflows/ci.yml"
    event: str = "pull_request"
    status: str = "completed"
    conclusion: str | None = "failure"
    run_number: int = 1
    run_attempt: int = 1
    actor: str = "octocat"
    display_title: str = ""
    created_at: datetime = EPOCH
    updated_at: datetime = EPOCH
    pull_requests: list[int] = field(default_factory=list)
    check_suite_id: int = 0


@dataclass
class Job:
    id: int
    run_id: int
    repo: str
    name: str
    status: str = "completed"
    conclusion: str | None = "failure"
    started_at: datetime = EPOCH
    completed_at: datetime | None = EPOCH
    steps: list[dict[str, Any]] = field(default_factory=list)
    labels: list[str] = field(default_factory=lambda: ["ubuntu-latest"])
    runner_name: str | None = "GitHub Actions 2"
    log: str | None = None  # None: logs expired/absent -> 404 like GitHub
    run_attempt: int = 1


@dataclass
class State:
    ids: IdAllocator = field(default_factory=IdAllocator)
    repos: dict[str, Repo] = field(default_factory=dict)
    app: App | None = None
    installations: dict[int, Installation] = field(default_factory=dict)
    tokens: dict[str, Token] = field(default_factory=dict)
    pulls: dict[tuple[str, int], PullRequest] = field(default_factory=dict)
    comments: dict[int, IssueComment] = field(default_factory=dict)
    reviews: dict[int, Review] = field(default_factory=dict)
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    runs: dict[int, WorkflowRun] = field(default_factory=dict)
    jobs: dict[int, Job] = field(default_factory=dict)
    # blob token -> (job id, expiry) for the signed log-download links
    log_links: dict[str, tuple[int, datetime]] = field(default_factory=dict)
    check_suites: dict[tuple[str, str], int] = field(default_factory=dict)
    # manifest-flow code -> the submitted manifest (handlers_apps.PendingManifest)
    manifests: dict[str, Any] = field(default_factory=dict)
    manifests_converted: list[int] = field(default_factory=list)

    def repo_by_id(self, repo_id: int) -> Repo | None:
        return next((r for r in self.repos.values() if r.id == repo_id), None)

    def knows_commit(self, full_name: str, sha: str) -> bool:
        repo = self.repos[full_name]
        if sha in repo.commits or sha in repo.files:
            return True
        return any(
            sha in {pr.head_sha, pr.base_sha, *(c.sha for c in pr.commits)}
            for pr in self.pulls.values() if full_name in {pr.repo, pr.head_repo}
        ) or any(run.head_sha == sha for run in self.runs.values() if run.repo == full_name)

    def comments_on(self, full_name: str, number: int) -> Iterator[IssueComment]:
        return (
            c for c in sorted(self.comments.values(), key=lambda c: c.id)
            if c.repo == full_name and c.issue_number == number
        )

    def reviews_on(self, full_name: str, number: int) -> list[Review]:
        return sorted(
            (r for r in self.reviews.values() if r.repo == full_name and r.pull_number == number),
            key=lambda r: r.id,
        )
