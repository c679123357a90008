"""Shared set-up: a fake GitHub seeded with PRs, test-only rules, and the App's driver."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar

import aiohttp
from gidgethub.aiohttp import GitHubAPI

from bot.core.findings import Finding, Severity
from bot.github.auth import AppAuth
from bot.github.calls import CallCounter, Flow, OnCall
from bot.github.drive_async import AsyncDriver
from bot.github.retry import RetryPolicy
from bot.sources.files import synthesize_patch
from rules.base import Rule, RuleContext
from tests.fakegithub import FakeGitHub, PullFile, generate_rsa_keypair
from tests.fakegithub.state import fake_sha

T = TypeVar("T")
APP_ID = 424242
INSTALLATION = 11
REPO = "octo-org/ml-repo"
OWNER, NAME = REPO.split("/")
BOT = "ci-stability-bot[bot]"
WORKFLOW = """name: CI
on: [pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - run: pytest tests/cpu
"""


def workflow(*, silenced: bool = False, legacy: bool = False, extra: str = "") -> str:
    text = WORKFLOW
    if legacy:
        text = "# legacy: kept for the old runners\n" + text
    if silenced:
        text = text.replace("    timeout-minutes: 30\n",
                            "    timeout-minutes: 30\n    continue-on-error: true\n")
    return text + extra


class SilencedJob(Rule):
    """Test rule: a job that may fail without failing CI."""

    id = "test-silenced-job"
    severity = Severity.ERROR

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        for changed in ctx.files():
            for line in changed.added_lines:
                if "continue-on-error: true" in line.text:
                    yield self.finding(
                        "`continue-on-error: true` lets this job fail without failing CI.",
                        file=changed, line=line.new_no, key=line.text.strip(),
                        suggestion=line.text.replace("true", "false"),
                    )


class LegacyComment(Rule):
    """Test rule: flags an unchanged line (so the finding is off the diff)."""

    id = "test-legacy"
    severity = Severity.WARNING

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        for changed in ctx.files():
            for number, text in enumerate(changed.head_lines or (), start=1):
                if text.startswith("# legacy") and number not in changed.added_line_numbers:
                    yield self.finding("Legacy runner note.", file=changed, line=number,
                                       key=text)


class NumberedSteps(Rule):
    """Test rule: one notice per added `- run: step-N` line (for many findings), and a
    two-line range finding with a suggestion for `# pair` + the next line."""

    id = "test-steps"
    severity = Severity.NOTICE

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        for changed in ctx.files():
            for line in changed.added_lines:
                assert line.new_no is not None
                if "- run: step-" in line.text:
                    yield self.finding(f"Step {line.text.strip()}.", file=changed,
                                       line=line.new_no, key=line.text.strip())
                if line.text.strip() == "# pair":
                    yield self.finding("Pair.", file=changed, line=line.new_no,
                                       end_line=line.new_no + 1, key="pair",
                                       suggestion="      # paired\n      - run: paired")


TEST_RULES: tuple[Rule, ...] = (SilencedJob(), LegacyComment(), NumberedSteps())


@cache
def app_keys() -> tuple[str, str]:
    return generate_rsa_keypair()


def new_fake(**options: Any) -> FakeGitHub:
    fake = FakeGitHub(check_responses=True, **options)
    fake.register_app(APP_ID, app_keys()[1])
    fake.add_installation(INSTALLATION, [REPO])
    return fake


def file_entry(path: str, base: str | None, head: str | None, *,
               previous: str | None = None, keep_patch: bool = True) -> PullFile:
    status = ("renamed" if previous else "added" if base is None
              else "removed" if head is None else "modified")
    patch = synthesize_patch(base, head) if keep_patch else None
    return PullFile(path, patch or None, status=status, previous_filename=previous)


def push(fake: FakeGitHub, number: int, files: dict[str, tuple[str | None, str | None]], *,
         tag: str, title: str = "Update CI", body: str = "") -> str:
    """Create or move PR `number` to a new head with these (base, head) texts."""
    head_sha, base_sha = fake_sha(REPO, number, tag), fake_sha(REPO, number, "base")
    entries = []
    for path, (base, head) in files.items():
        if base is not None:
            fake.add_file(REPO, path, base, ref=base_sha)
        if head is not None:
            fake.add_file(REPO, path, head, ref=head_sha)
        entries.append(file_entry(path, base, head))
    pr = fake.state.pulls.get((REPO, number))
    if pr is None:
        fake.add_pull(REPO, number, title=title, body=body, head_sha=head_sha,
                      base_sha=base_sha, files=entries)
    else:
        pr.head_sha, pr.files, pr.title, pr.body = head_sha, entries, title, body
    return head_sha


@dataclass
class Sleeps:
    """An injected sleep: records the waits instead of waiting."""

    waits: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@dataclass
class AppSide:
    driver: AsyncDriver
    counter: CallCounter
    sleeps: Sleeps

    async def run(self, flow: Flow[T]) -> T:
        return await self.driver.run(flow)


@asynccontextmanager
async def app_side(fake: FakeGitHub, *, timeout: float = 10.0,
                   cache: dict[str, Any] | None = None,
                   on_call: OnCall | None = None) -> AsyncIterator[AppSide]:
    """The App's real stack against the started fake: JWT → token → gidgethub driver."""
    async with aiohttp.ClientSession() as session:
        auth = AppAuth(APP_ID, app_keys()[0])
        token = await auth.installation_token(
            GitHubAPI(session, "tests", base_url=fake.url), INSTALLATION
        )
        counter, sleeps = CallCounter(), Sleeps()
        driver = AsyncDriver(
            session, token, base_url=fake.url, cache=cache, counter=counter, sleep=sleeps,
            write_spacing=0, timeout=aiohttp.ClientTimeout(total=timeout),
            policy=RetryPolicy(max_attempts=4, backoff_base=0.01), on_call=on_call,
        )
        yield AppSide(driver, counter, sleeps)


def run(scenario: Coroutine[Any, Any, None]) -> None:
    asyncio.run(scenario)


def bot_writes(fake: FakeGitHub) -> list[str]:
    return [c.operation_id or c.path for c in fake.writes()]


def sole(items: Iterable[T]) -> T:
    found = list(items)
    assert len(found) == 1, found
    return found[0]


def lines_of(text: str) -> Iterator[str]:
    return iter(text.splitlines())
