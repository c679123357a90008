"""Possible duplicate work, found through the fake GitHub with counted, cached calls."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import aiohttp

from bot.core.findings import Finding, Severity
from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.duplicates import (
    DuplicateReport,
    FilesCache,
    attach_duplicates,
    dedup_finding_text,
    duplicates_markdown,
    find_duplicates,
    mentioned_numbers,
)
from bot.github.drive_async import AsyncDriver
from tests.conftest import make_snapshot
from tests.evidence.factories import GLM_CONFIG, NOW
from tests.fakegithub import FakeGitHub, PullFile

REPO = "vllm-project/vllm"
TOKEN = "ghp_dedup_tests"
JOB = "LM Eval PCP 4xB200"
PATCH = "@@ -1,1 +1,2 @@\n env:\n+  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True"


def _snapshot() -> PullRequestSnapshot:
    snapshot = make_snapshot([{"path": GLM_CONFIG, "base": "env:\n", "head": "env:\n  X: 1\n"}],
                             title="[CI] Stabilize GLM-5.2 PCP evaluation",
                             body="Not a duplicate: #50791 fixes a different OOM.")
    return dataclasses.replace(snapshot, repo=REPO, number=51015, base_ref="main")


def _seed(fake: FakeGitHub) -> None:
    fake.add_personal_token(TOKEN, "reviewer")
    recent, old = NOW - timedelta(days=2), NOW - timedelta(days=30)
    same_file = [PullFile(GLM_CONFIG, PATCH)]
    other_file = [PullFile("docs/README.md", "@@ -1 +1 @@\n-a\n+b")]
    fake.add_pull(REPO, 51015, files=same_file, updated_at=NOW, title="[CI] Stabilize GLM")
    fake.add_pull(REPO, 50791, files=same_file, updated_at=recent, title="Bump GLM memory")
    fake.add_pull(REPO, 51020, files=same_file, updated_at=recent, title="Tune GLM eval",
                  user="someone-else")
    fake.add_pull(REPO, 51030, files=other_file, state="closed", merged_at=recent,
                  closed_at=recent, updated_at=recent, title=f"[CI] Fix {JOB} OOM")
    fake.add_pull(REPO, 49000, files=same_file, state="closed", merged_at=old, closed_at=old,
                  updated_at=old, title="Old GLM change")
    fake.add_pull(REPO, 51040, files=other_file, updated_at=recent, title="Docs typo")
    fake.add_pull(REPO, 51050, files=same_file, state="closed", closed_at=recent,
                  updated_at=recent, title="Abandoned GLM tweak")


@asynccontextmanager
async def _driver(fake: FakeGitHub) -> AsyncIterator[AsyncDriver]:
    async with aiohttp.ClientSession() as session:
        yield AsyncDriver(session, TOKEN, base_url=fake.url, write_spacing=0)


def test_open_and_recently_merged_duplicates() -> None:
    async def scenario() -> tuple[DuplicateReport, DuplicateReport, int, int]:
        async with FakeGitHub() as fake, _driver(fake) as driver:
            _seed(fake)
            cache = FilesCache()
            first = await driver.run(find_duplicates(_snapshot(), now=NOW, failing_jobs=[JOB],
                                                     cache=cache, max_calls=30))
            files_first = fake.count("pulls/list-files")
            second = await driver.run(find_duplicates(_snapshot(), now=NOW, failing_jobs=[JOB],
                                                      cache=cache, max_calls=30))
            assert fake.violations == []
            return first, second, files_first, fake.count("pulls/list-files") - files_first

    first, second, files_first, files_second = asyncio.run(scenario())
    by_number = {item.number: item for item in first.items}
    assert set(by_number) == {51020, 51030}
    assert by_number[51020].state == "open"
    assert by_number[51020].shared_files == (GLM_CONFIG,)
    assert by_number[51020].author == "someone-else"
    assert by_number[51030].state == "merged" and by_number[51030].shared_terms == (JOB,)
    assert by_number[51030].when == NOW - timedelta(days=2)
    assert first.already_mentioned == (50791,)
    assert not first.capped and first.calls <= 30
    # Every candidate's files were listed once; the second review hit the cache.
    assert files_first == first.files_checked and files_second == 0
    assert second.items == first.items and second.calls == first.calls - files_first


def test_the_call_cap_is_respected() -> None:
    async def scenario() -> DuplicateReport:
        async with FakeGitHub() as fake, _driver(fake) as driver:
            _seed(fake)
            report = await driver.run(find_duplicates(_snapshot(), now=NOW, failing_jobs=[JOB],
                                                      max_calls=3))
            assert len(fake.calls) == report.calls == 3
            return report

    report = asyncio.run(scenario())
    assert report.capped


def test_rendering() -> None:
    async def scenario() -> DuplicateReport:
        async with FakeGitHub() as fake, _driver(fake) as driver:
            _seed(fake)
            return await driver.run(find_duplicates(_snapshot(), now=NOW, failing_jobs=[JOB]))

    report = asyncio.run(scenario())
    markdown = duplicates_markdown(report)
    assert markdown is not None and markdown.startswith("### Possible duplicate work")
    assert f"- #51020 Tune GLM eval (open 2026-08-03): changes `{GLM_CONFIG}`" in markdown
    assert f"- #51030 [CI] Fix {JOB} OOM (merged 2026-08-03): mentions `{JOB}`" in markdown
    text = dedup_finding_text(report)
    assert text is not None and "#51020 (open: changes" in text and "not a duplicate" in text
    empty = DuplicateReport((), (), 0, 0, 0, False)
    assert duplicates_markdown(empty) is None and dedup_finding_text(empty) is None


def test_mentioned_numbers() -> None:
    body = ("See #12, vllm-project/vllm#34 and https://github.com/vllm-project/vllm/pull/56; "
            "not other/repo#78 nor the anchor a#90.")
    assert mentioned_numbers(body, REPO) == {12, 34, 56}


def test_without_a_repository_nothing_is_asked() -> None:
    flow = find_duplicates(dataclasses.replace(_snapshot(), repo=None), now=NOW)
    try:
        next(flow)
    except StopIteration as done:
        assert done.value == DuplicateReport((), (), 0, 0, 0, False)
    else:
        raise AssertionError("the flow asked GitHub")


def test_attach_duplicates_names_them_in_the_dedup_note() -> None:
    async def scenario() -> DuplicateReport:
        async with FakeGitHub() as fake, _driver(fake) as driver:
            _seed(fake)
            return await driver.run(find_duplicates(_snapshot(), now=NOW, failing_jobs=[JOB]))

    found = asyncio.run(scenario())
    note = Finding("dedup-note", Severity.WARNING, "Say which PRs you checked.")
    other = Finding("failing-run-link", Severity.WARNING, "Link the run.")
    attached = attach_duplicates(Report(findings=(note, other)), found)
    assert [title for title, _ in attached.sections] == ["Possible duplicate work"]
    assert attached.findings[0].message.startswith("Say which PRs you checked. Other pull "
                                                   "requests touch the same CI surface: #")
    assert {e.url for e in attached.findings[0].evidence} == {
        "https://github.com/vllm-project/vllm/pull/51020",
        "https://github.com/vllm-project/vllm/pull/51030"}
    assert attached.findings[1] == other
    empty = Report(findings=(note,))
    assert attach_duplicates(empty, DuplicateReport((), (), 0, 0, 0, False)) is empty
