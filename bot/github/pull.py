"""Fetch a pull request into a `PullRequestSnapshot`, with as few API calls as possible.

Calls: the PR, its files (100 per page, following `Link`), and the head text of each
in-scope file that the patch cannot provide (its base is rebuilt by undoing the
patch). Out-of-scope files never cost a contents call. The repository config is
read from the default branch only: a PR must not be able to change its own policy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from bot.core.config import CONFIG_PATH
from bot.core.diff import parse_file_patch
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from bot.github.calls import RAW_MEDIA, ApiCall, Flow, GitHubError, expect, paginate, repo_path
from bot.github.patch_texts import added_text, base_from_head, removed_text
from bot.sources.files import MAX_TEXT_BYTES, decode_text, from_github_entry

MAX_LISTED_FILES = 3000  # GitHub's cap for pulls/list-files
Notices = list[tuple[str | None, str]]


def get_pull(owner: str, repo: str, number: int) -> Flow[dict[str, Any]]:
    call = ApiCall("GET", f"{repo_path(owner, repo)}/pulls/{number}", operation="pulls/get")
    data: dict[str, Any] = yield from expect(call, ok=(200,))
    return data


def get_file(owner: str, repo: str, path: str, ref: str) -> Flow[bytes | None]:
    """A file's raw bytes at `ref`, or None when it does not exist there."""
    call = ApiCall(
        "GET", f"{repo_path(owner, repo)}/contents/{quote(path, safe='/')}",
        {"ref": ref}, accept=RAW_MEDIA, operation="repos/get-content",
    )
    result = yield call
    if result.status == 404:
        return None
    if result.status != 200:
        raise GitHubError(call, result)
    data = result.data
    if isinstance(data, str):
        return data.encode("utf-8")
    return data if isinstance(data, bytes) else b""


def fetch_config(owner: str, repo: str, default_branch: str) -> Flow[str | None]:
    """`.github/ci-stability.yml` from the default branch, or None when there is none."""
    data = yield from get_file(owner, repo, CONFIG_PATH, default_branch)
    return None if data is None else data.decode("utf-8", "replace")


def _text(
    owner: str, repo: str, path: str, ref: str | None, cap: int, notices: Notices
) -> Flow[str | None]:
    if not ref:
        return None
    data = yield from get_file(owner, repo, path, ref)
    if data is None:
        notices.append((path, f"not found at {ref[:7]}"))
        return None
    if len(data) > cap:
        notices.append((path, f"full text skipped: larger than {cap // 1024} KiB"))
        return None
    text, problem = decode_text(data)
    if problem:
        notices.append((path, problem))
    return text


def _texts(
    owner: str, repo: str, entry: dict[str, Any], pull: dict[str, Any], cap: int,
    notices: Notices,
) -> Flow[tuple[str | None, str | None]]:
    """(base, head) texts of one in-scope file, fetched only where the patch falls short."""
    path, status, patch = entry["filename"], entry.get("status"), entry.get("patch")
    old_path = entry.get("previous_filename") or path
    head_sha, base_sha = pull["head"]["sha"], pull["base"]["sha"]
    hunks, error = parse_file_patch(patch) if isinstance(patch, str) else ([], "missing")
    usable = error is None and bool(hunks)
    if status == "added":
        head = added_text(hunks) if usable else None
        if head is None:
            head = yield from _text(owner, repo, path, head_sha, cap, notices)
        return None, head
    if status == "removed":
        base = removed_text(hunks) if usable else None
        if base is None:
            base = yield from _text(owner, repo, old_path, base_sha, cap, notices)
        return base, None
    head = yield from _text(owner, repo, path, head_sha, cap, notices)
    base = None
    if head is not None and error is None:
        base = base_from_head(head, hunks)
    if base is None:
        base = yield from _text(owner, repo, old_path, base_sha, cap, notices)
    return base, head


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


def fetch_snapshot(
    owner: str,
    repo: str,
    number: int,
    *,
    wants_contents: Callable[[str], bool],
    text_cap: int = MAX_TEXT_BYTES,
    pull: dict[str, Any] | None = None,
) -> Flow[PullRequestSnapshot]:
    """The PR as the engine sees it. Pass `pull` when the PR was already fetched."""
    if pull is None:
        pull = yield from get_pull(owner, repo, number)
    entries = yield from paginate(
        f"{repo_path(owner, repo)}/pulls/{number}/files", "pulls/list-files",
        limit=MAX_LISTED_FILES,
    )
    notices: Notices = []
    changed_files = pull.get("changed_files")
    if isinstance(changed_files, int) and changed_files > len(entries):
        notices.append((None, f"GitHub lists only the first {len(entries)} of "
                              f"{changed_files} changed files; the rest were not reviewed"))
    files: list[ChangedFile] = []
    for entry in entries:
        path = entry["filename"]
        previous = entry.get("previous_filename")
        base = head = None
        if wants_contents(path) or (previous is not None and wants_contents(previous)):
            base, head = yield from _texts(owner, repo, entry, pull, text_cap, notices)
        changed = from_github_entry(
            path, entry.get("status", "modified"), entry.get("patch"), previous, base, head
        )
        if entry.get("patch") is None:
            # Hunks synthesized from the texts are not GitHub's diff: nothing can be
            # commented inline on such a file.
            changed = dataclasses.replace(changed, patch_missing=True)
        files.append(changed)
    return snapshot_from_api(pull, files, notices)
