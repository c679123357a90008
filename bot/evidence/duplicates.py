"""Possible duplicate work: other PRs fixing the same files or the same red job.

Two people fixing the same failing test on the same day is what the `dedup-note`
rule exists to prevent. Candidates are open PRs and PRs merged in the last N days,
found by listing pulls (newest activity first) and by searching PR titles and
bodies for the failing job, config stem or test file. A candidate counts when it
changes one of the same files or names the same job/config/test — unless the
description already mentions it (`#123`, `owner/repo#123`, a pull URL). Every call
is counted against a cap, and file lists are cached per (repo, PR, updated_at).
"""

from __future__ import annotations

import dataclasses
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bot.core.findings import Evidence
from bot.core.report import Report
from bot.core.snapshot import PullRequestSnapshot
from bot.evidence.needles import NeedleKind, boundary_pattern, needles_for
from bot.evidence.records import from_text
from bot.github.calls import ApiCall, Flow, repo_path
from bot.render import mdsafe

SECTION_TITLE = "Possible duplicate work"
DEDUP_RULE = "dedup-note"
DEFAULT_MERGED_DAYS = 7
DEFAULT_MAX_CALLS = 20
MAX_SEARCHES = 3
MAX_TERMS = 8
_REF = re.compile(r"(?:(?<![\w/])#|/pull/|/issues/)(\d{1,7})\b")
CacheKey = tuple[str, int, str]


class FilesCache:
    """File lists of other PRs, keyed by (repo, number, updated_at); bounded, LRU."""

    def __init__(self, capacity: int = 2000) -> None:
        self._capacity = capacity
        self._items: OrderedDict[CacheKey, tuple[str, ...]] = OrderedDict()

    def get(self, key: CacheKey) -> tuple[str, ...] | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: CacheKey, files: tuple[str, ...]) -> None:
        self._items[key] = files
        self._items.move_to_end(key)
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)


@dataclass(frozen=True)
class PossibleDuplicate:
    number: int
    title: str
    url: str
    state: str  # "open" or "merged"
    author: str | None
    when: datetime | None  # merged_at for merged PRs, updated_at for open ones
    shared_files: tuple[str, ...]
    shared_terms: tuple[str, ...]

    def reasons(self) -> str:
        """Why it may duplicate this PR, as Markdown (hostile text already escaped)."""
        parts = []
        if self.shared_files:
            shown = ", ".join(mdsafe.code(p) for p in self.shared_files[:3])
            more = f" (+{len(self.shared_files) - 3})" if len(self.shared_files) > 3 else ""
            parts.append(f"changes {shown}{more}")
        if self.shared_terms:
            parts.append("mentions " + ", ".join(mdsafe.code(t) for t in self.shared_terms[:3]))
        return "; ".join(parts)


@dataclass(frozen=True)
class DuplicateReport:
    items: tuple[PossibleDuplicate, ...]
    already_mentioned: tuple[int, ...]
    calls: int
    candidates: int
    files_checked: int
    capped: bool  # the call cap stopped the search before every candidate was checked


def mentioned_numbers(body: str, repo: str | None) -> frozenset[int]:
    """PR/issue numbers the description refers to (`#12`, `o/r#12`, …/pull/12)."""
    numbers = {int(m) for m in _REF.findall(body or "")}
    if repo:
        numbers |= {int(m) for m in re.findall(rf"{re.escape(repo)}#(\d+)", body or "", re.I)}
    return frozenset(numbers)


def search_terms(snapshot: PullRequestSnapshot, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Failing job names first, then config stems, test file names and job labels."""
    kinds = {NeedleKind.CONFIG_STEM, NeedleKind.FILE_NAME, NeedleKind.JOB_LABEL}
    terms = [t.strip().replace('"', "") for t in extra]
    terms += [n.text for n in needles_for(snapshot) if n.kind in kinds]
    return tuple(t for t in dict.fromkeys(terms) if len(t) >= 4)[:MAX_TERMS]


@dataclass
class _Candidate:
    data: Mapping[str, Any]
    state: str
    found_by: set[str]


def _merged_or_open(pr: Mapping[str, Any], since: datetime) -> str | None:
    merged = pr.get("merged_at") or (pr.get("pull_request") or {}).get("merged_at")
    if pr.get("state") == "open":
        return "open"
    moment = from_text(merged) if isinstance(merged, str) else None
    return "merged" if moment is not None and moment >= since else None


class _Search:
    def __init__(self, snapshot: PullRequestSnapshot, max_calls: int) -> None:
        assert snapshot.repo is not None
        self.repo = snapshot.repo
        owner, name = snapshot.repo.split("/", 1)
        self.base = repo_path(owner, name)
        self.calls = 0
        self.max_calls = max_calls
        self.capped = False
        self.candidates: dict[int, _Candidate] = {}

    def allowed(self) -> bool:
        if self.calls >= self.max_calls:
            self.capped = True
            return False
        return True

    def add(self, pr: Mapping[str, Any], since: datetime, how: str) -> None:
        number = pr.get("number")
        state = _merged_or_open(pr, since)
        if isinstance(number, int) and state is not None:
            self.candidates.setdefault(number, _Candidate(pr, state, set())).found_by.add(how)

    def list_pulls(self, state: str, since: datetime) -> Flow[None]:
        call: ApiCall | None = ApiCall(
            "GET", f"{self.base}/pulls",
            {"state": state, "sort": "updated", "direction": "desc", "per_page": 100},
            operation="pulls/list")
        while call is not None and self.allowed():
            self.calls += 1
            result = yield call
            page = result.data if result.ok and isinstance(result.data, list) else []
            for pr in page:
                if isinstance(pr, Mapping):
                    self.add(pr, since, "list")
            last = from_text(page[-1].get("updated_at")) if page else None
            older = last is not None and last < since
            call = (ApiCall("GET", result.next_url, operation="pulls/list")
                    if result.next_url and not older and state != "open" else None)

    def search(self, term: str, since: datetime) -> Flow[None]:
        if not self.allowed():
            return
        self.calls += 1
        query = f'repo:{self.repo} is:pr "{term}"'
        result = yield ApiCall("GET", "/search/issues", {"q": query, "per_page": 30},
                               operation="search/issues-and-pull-requests")
        items = result.data.get("items") if result.ok and isinstance(result.data, dict) else []
        for item in items or []:
            if isinstance(item, Mapping):
                self.add(item, since, f"search:{term}")

    def files(self, number: int, updated: str, cache: FilesCache) -> Flow[tuple[str, ...] | None]:
        key = (self.repo.lower(), number, updated)
        cached = cache.get(key)
        if cached is not None:
            return cached
        if not self.allowed():
            return None
        self.calls += 1
        result = yield ApiCall("GET", f"{self.base}/pulls/{number}/files", {"per_page": 100},
                               operation="pulls/list-files")
        if not result.ok or not isinstance(result.data, list):
            return None
        names = tuple(str(f.get("filename")) for f in result.data if isinstance(f, Mapping))
        cache.put(key, names)
        return names


def _terms_in(text: str, terms: Sequence[str]) -> tuple[str, ...]:
    return tuple(t for t in terms if boundary_pattern(t).search(text))


def find_duplicates(snapshot: PullRequestSnapshot, *, now: datetime,
                    failing_jobs: Iterable[str] = (), cache: FilesCache | None = None,
                    merged_within_days: int = DEFAULT_MERGED_DAYS,
                    max_calls: int = DEFAULT_MAX_CALLS) -> Flow[DuplicateReport]:
    """Open and recently merged PRs that may duplicate this one (a flow: yields ApiCalls)."""
    if not snapshot.repo or "/" not in snapshot.repo:
        return DuplicateReport((), (), 0, 0, 0, False)
    cache = cache if cache is not None else FilesCache()
    since = now - timedelta(days=merged_within_days)
    search = _Search(snapshot, max_calls)
    terms = search_terms(snapshot, failing_jobs)
    yield from search.list_pulls("open", since)
    yield from search.list_pulls("closed", since)
    for term in terms[:MAX_SEARCHES]:
        yield from search.search(term, since)

    mine = {f.path for f in snapshot.files} | {
        f.previous_path for f in snapshot.files if f.previous_path}
    mentioned = mentioned_numbers(snapshot.body, snapshot.repo)
    skipped = sorted(n for n in search.candidates if n in mentioned and n != snapshot.number)
    pool = [(n, c) for n, c in search.candidates.items()
            if n != snapshot.number and n not in mentioned]
    # Those naming a term, then the most recently active: the likeliest duplicates first.
    pool.sort(key=lambda item: (
        -len(_terms_in(f"{item[1].data.get('title')}\n{item[1].data.get('body')}", terms)),
        -(from_text(item[1].data.get("updated_at")) or since).timestamp()))
    items: list[PossibleDuplicate] = []
    checked = 0
    for number, candidate in pool:
        pr = candidate.data
        files = yield from search.files(number, str(pr.get("updated_at")), cache)
        checked += files is not None
        shared = tuple(sorted(mine.intersection(files or ())))
        text = f"{pr.get('title') or ''}\n{pr.get('body') or ''}"
        named = _terms_in(text, terms)
        if not shared and not named:
            continue
        merged = pr.get("merged_at") or (pr.get("pull_request") or {}).get("merged_at")
        user = pr.get("user")
        items.append(PossibleDuplicate(
            number=number, title=str(pr.get("title") or ""), url=str(pr.get("html_url") or ""),
            state=candidate.state,
            author=str(user.get("login")) if isinstance(user, Mapping) else None,
            when=from_text(merged if candidate.state == "merged" else pr.get("updated_at")),
            shared_files=shared, shared_terms=named,
        ))
    return DuplicateReport(tuple(items), tuple(skipped), search.calls, len(pool), checked,
                           search.capped)


def duplicates_markdown(report: DuplicateReport, *, limit: int = 10,
                        heading: bool = True) -> str | None:
    """A short list for the summary comment; None when nothing was found."""
    if not report.items:
        return None
    lines = [f"### {SECTION_TITLE}", ""] if heading else []
    for item in report.items[:limit]:
        when = f" {item.when:%Y-%m-%d}" if item.when else ""
        lines.append(f"- #{item.number} {mdsafe.text(item.title)} ({item.state}{when}): "
                     f"{item.reasons()}")
    if len(report.items) > limit:
        lines.append(f"- …and {len(report.items) - limit} more")
    if report.capped:
        lines.append("")
        lines.append(f"_Stopped after {report.calls} API calls; more candidates were not checked._")
    return "\n".join(lines)


def dedup_finding_text(report: DuplicateReport, *, limit: int = 3) -> str | None:
    """One sentence for the `dedup-note` finding, naming what the description should address."""
    if not report.items:
        return None
    named = "; ".join(f"#{i.number} ({i.state}: {i.reasons()})"
                      for i in report.items[:limit])
    more = f" and {len(report.items) - limit} more" if len(report.items) > limit else ""
    return (f"Other pull requests touch the same CI surface: {named}{more}. Say in the "
            "description why this is not a duplicate (e.g. `#123: different failure`).")


def attach_duplicates(report: Report, duplicates: DuplicateReport) -> Report:
    """`report` with the candidates as a section, named in the `dedup-note` finding too."""
    body = duplicates_markdown(duplicates, heading=False)
    sentence = dedup_finding_text(duplicates)
    if body is None or sentence is None:
        return report
    links = tuple(Evidence(f"#{i.number} {i.title}", i.url) for i in duplicates.items[:5]
                  if i.url.startswith("https://"))
    findings = tuple(
        dataclasses.replace(f, message=f"{f.message} {sentence}", evidence=f.evidence or links)
        if f.rule == DEDUP_RULE else f
        for f in report.findings
    )
    return dataclasses.replace(report, findings=findings,
                               sections=(*report.sections, (SECTION_TITLE, body)))
