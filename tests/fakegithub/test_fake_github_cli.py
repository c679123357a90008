"""The fake driven by the CLI's real client: synchronous PyGithub in the test thread."""

from __future__ import annotations

import time

import pytest
from github import Auth, Github, GithubException
from github.ContentFile import ContentFile
from github.GithubRetry import GithubRetry

from . import PullFile, running_fake_github

REPO = "octo-org/ml-repo"


def cli(url: str, auth: Auth.Auth, retry: GithubRetry | None = None) -> Github:
    # PyGithub pauses 0.25 s between requests and 1 s between writes by default.
    return Github(auth=auth, base_url=url, lazy=True, retry=retry,
                  seconds_between_requests=0, seconds_between_writes=0)
PATCH = "@@ -1,2 +1,3 @@\n import torch\n+import pytest\n def test_cpu():"


def test_cli_reads_a_pull_request_and_posts() -> None:
    with running_fake_github(check_responses=True) as gh:
        gh.add_personal_token("pat-maintainer", "maintainer")
        gh.add_pull(REPO, 5, body="b", files=[PullFile(f"tests/cpu/test_{i}.py", PATCH)
                                              for i in range(35)])
        gh.add_file(REPO, "README.md", "# ml-repo\n")
        client = cli(gh.url, Auth.Token("pat-maintainer"))
        repo = client.get_repo(REPO)  # lazy: GET /repos/{o}/{r} is outside the subset
        pull = repo.get_pull(5)
        assert pull.title == "Update CI" and pull.base.ref == "main"
        assert len(list(pull.get_files())) == 35
        readme = repo.get_contents("README.md")
        assert isinstance(readme, ContentFile) and readme.decoded_content == b"# ml-repo\n"
        comment = pull.create_issue_comment("summary <!-- ci-stability:summary -->")
        comment.edit("summary v2 <!-- ci-stability:summary -->")
        assert comment.create_reaction("rocket").content == "rocket"
        assert [i.number for i in client.search_issues(f"repo:{REPO} is:pr is:open")] == [5]
        assert repo.get_collaborator_permission("maintainer") == "read"
        assert gh.issue_comments(REPO, 5)[0].user == "maintainer"
        assert gh.violations == [] and gh.response_problems == []


def test_cli_cannot_create_check_runs_with_a_personal_token() -> None:
    with running_fake_github() as gh:
        gh.add_personal_token("pat", "someone")
        pull = gh.add_pull(REPO, 5)
        repo = cli(gh.url, Auth.Token("pat")).get_repo(REPO)
        with pytest.raises(GithubException) as refused:
            repo.create_check_run("CI stability review", pull.head_sha)
        assert refused.value.status == 403


def test_pygithub_app_auth_and_check_run() -> None:
    with running_fake_github() as gh:
        private_key = gh.create_app(424242)
        gh.add_installation(3, [REPO])
        pull = gh.add_pull(REPO, 5)
        auth = Auth.AppAuth(424242, private_key).get_installation_auth(3)
        repo = cli(gh.url, auth).get_repo(REPO)
        check = repo.create_check_run("CI stability review", pull.head_sha, status="in_progress")
        check.edit(conclusion="success", output={"title": "ok", "summary": "clean"})
        assert (check.status, check.conclusion) == ("completed", "success")
        assert gh.count("apps/create-installation-access-token") == 1
        assert [c.operation_id for c in gh.writes()] == ["checks/create", "checks/update"]
        assert gh.violations == []


def test_pygithub_retries_after_secondary_rate_limit() -> None:
    with running_fake_github() as gh:
        gh.add_personal_token("pat", "someone")
        gh.add_pull(REPO, 5)
        gh.inject_secondary_rate_limit("POST", r"/issues/5/comments$", retry_after=1)
        retry = GithubRetry(total=2, secondary_rate_wait=1)
        pull = cli(gh.url, Auth.Token("pat"), retry).get_repo(REPO).get_pull(5)
        started = time.monotonic()
        pull.create_issue_comment("hello")
        assert time.monotonic() - started >= 1
        assert [c.status for c in gh.calls_to("issues/create-comment")] == [403, 201]
        assert len(gh.issue_comments(REPO, 5)) == 1
