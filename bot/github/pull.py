"""Fetch a pull request into a `PullRequestSnapshot`, with as few API calls as possible.

Calls: the PR; its files from one comparison (`compare.py`; list-files, 100 per page,
where the comparison falls short); then one GraphQL query for the head text of every
in-scope file the patch cannot provide (a base is rebuilt by undoing the patch, and only
fetched, in a second query, where that fails), the config and the directories the
repository view will be asked about (`file_texts.py`, `api_view.py`). Out-of-scope files
cost nothing. The config is read from the default branch only: a PR must not be able to
change its own policy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.core.config import CONFIG_PATH
from bot.core.diff import parse_file_patch
from bot.core.limits import DEFAULT_LIMITS, ReviewLimits
from bot.core.repo_view import parent
from bot.core.snapshot import ChangedFile, Hunk, PullRequestSnapshot
from bot.github.api_view import MAX_PREFETCH_DIRS, ApiRepoView
from bot.github.calls import ApiCall, Flow, expect, paginate, repo_path
from bot.github.compare import compare_files
from bot.github.fetch_caps import EntryKeeper, entry_wanted
from bot.github.file_texts import Fetched, Key, get_file, read_texts
from bot.github.graphql import MAX_OBJECTS
from bot.github.patch_texts import added_text, base_from_head, removed_text
from bot.sources.files import MAX_TEXT_BYTES, from_github_entry

MAX_LISTED_FILES = 3000  # GitHub's cap for pulls/list-files
Notices = list[tuple[str | None, str]]


def get_pull(owner: str, repo: str, number: int) -> Flow[dict[str, Any]]:
    call = ApiCall("GET", f"{repo_path(owner, repo)}/pulls/{number}", operation="pulls/get")
    data: dict[str, Any] = yield from expect(call, ok=(200,))
    return data


def fetch_config(owner: str, repo: str, default_branch: str) -> Flow[str | None]:
    """`.github/ci-stability.yml` from the default branch, or None when there is none.

    Over the contents API on purpose: the App's ETag cache turns a repeated read into a
    free 304, which keeps a redelivered webhook at two calls.
    """
    data = yield from get_file(owner, repo, CONFIG_PATH, default_branch)
    return None if data is None else data.decode("utf-8", "replace")


@dataclass
class _Plan:
    """What one in-scope file needs beyond its patch, and what it has so far."""

    entry: dict[str, Any]
    hunks: list[Hunk]
    usable: bool  # the patch parsed and has hunks
    exact: bool  # the patch parsed (a base may be rebuilt from the head)
    base: str | None = None
    head: str | None = None

    @property
    def path(self) -> str:
        return str(self.entry["filename"])

    @property
    def old_path(self) -> str:
        return str(self.entry.get("previous_filename") or self.entry["filename"])

    @property
    def status(self) -> str:
        return str(self.entry.get("status") or "modified")


def _plan(entry: dict[str, Any]) -> _Plan:
    patch = entry.get("patch")
    hunks, error = parse_file_patch(patch) if isinstance(patch, str) else ([], "missing")
    plan = _Plan(entry, list(hunks), error is None and bool(hunks), error is None)
    if plan.status == "added" and plan.usable:
        plan.head = added_text(hunks)
    if plan.status == "removed" and plan.usable:
        plan.base = removed_text(hunks)
    return plan


def _first_wants(plan: _Plan, head_sha: str, base_sha: str) -> list[Key]:
    if plan.status == "added":
        return [] if plan.head is not None else [(plan.path, head_sha)]
    if plan.status == "removed":
        return [] if plan.base is not None else [(plan.old_path, base_sha)]
    return [(plan.path, head_sha)]


def _take(found: dict[Key, Fetched], key: Key, notices: Notices) -> str | None:
    fetched = found[key]
    if fetched.problem:
        notices.append((key[0], fetched.problem))
    return fetched.text


def _fetch_texts(
    owner: str, repo: str, plans: list[_Plan], pull: dict[str, Any], cap: int,
    notices: Notices, config: Key | None, view: ApiRepoView | None,
) -> Flow[str | None]:
    """Fill the plans' texts in one batch (two when a base cannot be rebuilt); returns
    the config's text when `config` names it, the view's directories come along."""
    head_sha, base_sha = pull["head"].get("sha") or "", pull["base"].get("sha") or ""
    first: list[Key] = [key for plan in plans for key in _first_wants(plan, head_sha, base_sha)]
    dirs = sorted({parent(plan.path) for plan in plans})[:MAX_PREFETCH_DIRS] if view else []
    keys = [*first, *([config] if config else [])]
    found, trees = yield from read_texts(
        owner, repo, keys, cap, [view.dir_expression(d) for d in dirs] if view else [])
    if view is not None:
        for folder in dirs:
            view.learn_dir(folder, trees[view.dir_expression(folder)])
    second: list[Key] = []
    for plan in plans:
        if plan.status == "added" and plan.head is None:
            plan.head = _take(found, (plan.path, head_sha), notices)
        elif plan.status == "removed" and plan.base is None:
            plan.base = _take(found, (plan.old_path, base_sha), notices)
        elif plan.status not in {"added", "removed"}:
            plan.head = _take(found, (plan.path, head_sha), notices)
            if plan.head is not None and plan.exact:
                plan.base = base_from_head(plan.head, plan.hunks)
            if plan.base is None:
                second.append((plan.old_path, base_sha))
    if second:
        bases, _ = yield from read_texts(owner, repo, second, cap)
        for plan in plans:
            if plan.status not in {"added", "removed"} and plan.base is None:
                plan.base = _take(bases, (plan.old_path, base_sha), notices)
    if config is None:
        return None
    settled = found[config]
    return None if settled.missing else settled.text


def snapshot_from_api(
    pull: dict[str, Any], files: list[ChangedFile], notices: Notices
) -> PullRequestSnapshot:
    user = pull.get("user") or {}
    return PullRequestSnapshot(
        files=tuple(files),
        repo=(pull.get("base", {}).get("repo") or {}).get("full_name"),
        number=pull.get("number"),
        title=pull.get("title") or "",
        body=pull.get("body") or "",
        author=user.get("login"),
        base_ref=pull["base"].get("ref"),
        base_sha=pull["base"].get("sha"),
        head_ref=pull["head"].get("ref"),
        head_sha=pull["head"].get("sha"),
        labels=tuple(
            label["name"] for label in pull.get("labels") or [] if isinstance(label, dict)
        ),
        notices=tuple(notices),
    )


def _plans(entries: list[dict[str, Any]], wants: Callable[[str], bool],
           have: dict[int, _Plan], keeper: EntryKeeper) -> dict[int, _Plan]:
    return {
        id(entry): _plan(entry) for entry in entries
        if id(entry) not in have and not keeper.is_capped(entry) and entry_wanted(entry, wants)
    }


def list_entries(owner: str, repo: str, number: int, pull: dict[str, Any],
                 keeper: EntryKeeper | None = None) -> Flow[list[dict[str, Any]]]:
    """The PR's changed files: one comparison where it is equivalent, else list-files;
    `keeper` drops the patches past the review's limits as they arrive."""
    entries = yield from compare_files(owner, repo, pull)
    if entries is None:
        entries = yield from paginate(
            f"{repo_path(owner, repo)}/pulls/{number}/files", "pulls/list-files",
            limit=MAX_LISTED_FILES, each=keeper.offer if keeper else None,
        )
    elif keeper is not None:
        for entry in entries:
            keeper.offer(entry)
    return entries if keeper is None else keeper.entries


def _fetch_within(
    owner: str, repo: str, plans: list[_Plan], pull: dict[str, Any], cap: int,
    notices: Notices, config: Key | None, view: ApiRepoView | None, keeper: EntryKeeper,
) -> Flow[str | None]:
    """`_fetch_texts` a batch at a time while the byte budget lasts; the files whose
    texts it no longer affords are left out of the review (named in its notice)."""
    config_text: str | None = None
    for start in range(0, max(len(plans), 1), MAX_OBJECTS):
        chunk = plans[start : start + MAX_OBJECTS]
        if keeper.spent:
            for plan in plans[start:]:
                keeper.drop(plan.entry)
            if start or config is None:
                break
            chunk = []  # the config is still read
        text = yield from _fetch_texts(owner, repo, chunk, pull, cap, notices,
                                       config if start == 0 else None, view if start == 0 else None)
        config_text = text if start == 0 else config_text
        keeper.spend(sum(len(p.base or "") + len(p.head or "") for p in chunk))
    return config_text


def fetch_snapshot(
    owner: str,
    repo: str,
    number: int,
    *,
    wants_contents: Callable[[str], bool],
    text_cap: int = MAX_TEXT_BYTES,
    pull: dict[str, Any] | None = None,
    limits: ReviewLimits = DEFAULT_LIMITS,
) -> Flow[PullRequestSnapshot]:
    """The PR as the engine sees it. Pass `pull` when the PR was already fetched."""
    snapshot, _ = yield from fetch_snapshot_and_config(
        owner, repo, number, wants_contents=wants_contents, text_cap=text_cap, pull=pull,
        limits=limits)
    return snapshot


def fetch_snapshot_and_config(
    owner: str,
    repo: str,
    number: int,
    *,
    wants_contents: Callable[[str], bool],
    text_cap: int = MAX_TEXT_BYTES,
    pull: dict[str, Any] | None = None,
    config_ref: str | None = None,
    rescope: Callable[[str | None], Callable[[str], bool]] | None = None,
    limits: ReviewLimits = DEFAULT_LIMITS,
) -> Flow[tuple[PullRequestSnapshot, str | None]]:
    """The snapshot, and the config's text read at `config_ref` (the default branch) in
    the same query when given (None: not asked, or no config there). `rescope` maps that
    text to the files it puts in scope; texts of files it adds are fetched after it."""
    if pull is None:
        pull = yield from get_pull(owner, repo, number)
    keeper = EntryKeeper(limits, wants_contents)
    entries = yield from list_entries(owner, repo, number, pull, keeper)
    notices: Notices = []
    changed_files = pull.get("changed_files")
    if isinstance(changed_files, int) and changed_files > len(entries):
        notices.append((None, f"GitHub lists only the first {len(entries)} of "
                              f"{changed_files} changed files; the rest were not reviewed"))
    plans = _plans(entries, wants_contents, {}, keeper)
    base_sha = pull["base"].get("sha")
    view = ApiRepoView(owner, repo, base_sha, cap=text_cap) if base_sha else None
    config_text = yield from _fetch_within(
        owner, repo, list(plans.values()), pull, text_cap, notices,
        (CONFIG_PATH, config_ref) if config_ref else None, view, keeper)
    if config_ref and rescope is not None:
        more = _plans(entries, rescope(config_text), plans, keeper)
        if more:
            yield from _fetch_within(owner, repo, list(more.values()), pull, text_cap,
                                     notices, None, view, keeper)
            plans.update(more)
    files: list[ChangedFile] = []
    capped: list[tuple[bool, int, str]] = []  # (out of scope, order, path): as the engine
    for entry in entries:
        if keeper.is_capped(entry):
            capped.append((not entry_wanted(entry, wants_contents), len(capped),
                           entry["filename"]))
            continue
        plan = plans.get(id(entry))
        base, head = (plan.base, plan.head) if plan else (None, None)
        changed = from_github_entry(
            entry["filename"], entry.get("status", "modified"), entry.get("patch"),
            entry.get("previous_filename"), base, head,
        )
        if entry.get("patch") is None:
            # Hunks synthesized from the texts are not GitHub's diff: nothing can be
            # commented inline on such a file.
            changed = dataclasses.replace(changed, patch_missing=True)
        files.append(changed)
    snapshot = dataclasses.replace(snapshot_from_api(pull, files, notices), repo_view=view,
                                   capped=tuple(path for *_, path in sorted(capped)))
    return snapshot, config_text
