"""The CLI twin: the same flows driven synchronously by PyGithub (`review --github`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.cli.review_github import main, parse_target
from bot.github.drive_sync import SyncDriver, github_retry
from bot.github.review import ReviewRequest, review_pull_request
from bot.render.markers import SUMMARY as SUMMARY_MARKER
from tests.fakegithub import FakeGitHub, running_fake_github

from .kit import (
    APP_ID,
    BOT,
    INSTALLATION,
    NAME,
    OWNER,
    REPO,
    TEST_RULES,
    app_keys,
    push,
    sole,
    workflow,
)

PATH = ".github/workflows/ci.yml"


def seeded(gh: FakeGitHub) -> str:
    gh.register_app(APP_ID, app_keys()[1])
    gh.add_installation(INSTALLATION, [REPO])
    return gh.issue_installation_token(INSTALLATION)  # what Actions' GITHUB_TOKEN is


def driver(gh: FakeGitHub, token: str) -> SyncDriver:
    return SyncDriver(token, base_url=gh.url, timeout=2, seconds_between_requests=0,
                      seconds_between_writes=0, retry=github_retry(backoff_factor=0.01))


def summaries(gh: FakeGitHub) -> list[Any]:
    return [c for c in gh.issue_comments(REPO, 7) if SUMMARY_MARKER in c.body]


def test_sync_driver_publishes_like_the_app_and_is_idempotent_without_a_store() -> None:
    with running_fake_github(check_responses=True) as gh:
        token = seeded(gh)
        first = push(gh, 7, {PATH: (workflow(legacy=True), workflow(legacy=True, silenced=True))},
                     tag="h1")
        gh.inject("GET", r"/pulls/7/files$|/compare/", 502)
        gh.inject_secondary_rate_limit("POST", r"/pulls/7/reviews$", retry_after=1)
        request = ReviewRequest(OWNER, NAME, 7, bot_login=BOT, rules=TEST_RULES,
                                early_check=False, force=True)
        cli = driver(gh, token)
        outcome = cli.run(review_pull_request(request, None))  # no store: state from GitHub
        assert outcome.report is not None and len(outcome.report.findings) == 2
        check = sole(gh.check_runs(REPO, first))
        assert check.conclusion == "failure" and len(check.annotations) == 2
        assert len(sole(gh.reviews(REPO, 7)).comments) == 1
        assert sole(summaries(gh)).user == BOT

        writes = len(gh.writes())
        cli.run(review_pull_request(request, None))  # same head, same report
        assert len(gh.writes()) == writes

        push(gh, 7, {PATH: (workflow(legacy=True), workflow(legacy=True, extra="#\n"))},
             tag="h2")
        cli.run(review_pull_request(request, None))
        assert len(gh.reviews(REPO, 7)) == 1
        assert "Resolved since the previous push" in sole(summaries(gh)).body
        assert gh.violations == []


def test_cli_prints_the_review_and_posts_with_an_installation_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_fake_github() as gh:
        token = seeded(gh)
        head = push(gh, 7, {PATH: (workflow(), workflow(silenced=True))}, tag="h1")
        monkeypatch.setenv("GITHUB_TOKEN", token)
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        argv = ["--github", f"{REPO}#7", "--format", "json", "--fail-level", "none"]
        assert main(argv, driver(gh, token)) == 0
        printed = json.loads(capsys.readouterr().out)
        assert gh.writes() == [] and printed["conclusion"] in {"success", "neutral", "failure"}

        code = main([*argv, "--post", "--bot-login", BOT], driver(gh, token))
        assert code == 0
        posted = json.loads(capsys.readouterr().out)
        assert posted == printed
        assert sole(gh.check_runs(REPO, head)).conclusion == printed["conclusion"]
        assert len(summaries(gh)) == (1 if printed["findings"] else 0)
        assert gh.violations == []


def test_cli_post_with_a_personal_token_explains_the_refused_check_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_fake_github() as gh:
        seeded(gh)
        token = gh.add_personal_token("pat-maintainer", "maintainer")
        push(gh, 7, {PATH: (workflow(), workflow(silenced=True))}, tag="h1")
        monkeypatch.setenv("GITHUB_TOKEN", token)
        monkeypatch.setenv("GITHUB_ACTIONS", "true")  # implies the login below
        code = main(["--github", f"{REPO}#7", "--post", "--fail-level", "none"],
                    driver(gh, token))
        err = capsys.readouterr().err
        assert code == 0
        assert "warning: Check run not published: GitHub answered 403" in err
        assert gh.check_runs(REPO) == [] and gh.violations == []


def test_cli_errors_are_explained_without_tracebacks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("CI_STABILITY_BOT_LOGIN", raising=False)
    assert main(["--github", f"{REPO}#7"]) == 2
    assert "set GITHUB_TOKEN" in capsys.readouterr().err
    assert main(["--github", "not-a-pr"]) == 2
    assert "expected OWNER/REPO#NUMBER" in capsys.readouterr().err
    with running_fake_github() as gh:
        seeded(gh)
        push(gh, 7, {PATH: (workflow(), workflow())}, tag="h1")
        monkeypatch.setenv("GITHUB_TOKEN", "ghs_wrong")
        assert main(["--github", f"{REPO}#7"], driver(gh, "ghs_wrong")) == 2
        assert "401 Bad credentials" in capsys.readouterr().err
        token = gh.add_personal_token("pat", "someone")
        monkeypatch.setenv("GITHUB_TOKEN", token)
        assert main(["--github", f"{REPO}#404"], driver(gh, token)) == 2
        assert "octo-org/ml-repo#404: not found" in capsys.readouterr().err
        assert main(["--github", f"{REPO}#7", "--post"], driver(gh, token)) == 2
        assert "--bot-login" in capsys.readouterr().err


def test_parse_target() -> None:
    assert parse_target("vllm-project/vllm#123") == ("vllm-project", "vllm", 123)
    assert parse_target("https://github.com/a/b.c/pull/9") == ("a", "b.c", 9)
