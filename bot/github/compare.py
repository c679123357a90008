"""A pull request's changed files in one call: the compare API, where it is equivalent.

`GET /repos/{o}/{r}/compare/{base}...{head}` diffs `head` against the merge base of the
two commits, which is what a pull request shows, and returns the changed files in the
shape `pulls/list-files` uses. GitHub documents that "the list of changed files is only
shown on the first page of results, and it includes up to 300 changed files for the
entire comparison" when a paging parameter is given; `per_page=1` keeps the commit list
(up to 250 commits otherwise) out of the answer. Where the comparison cannot stand in
for list-files the caller pages through list-files instead: more than 300 files (or a
count that does not match the PR's `changed_files`), or a changed file without a patch
(list-files may still have it), or any answer but 200.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from bot.github.calls import ApiCall, Flow, repo_path

MAX_COMPARE_FILES = 300


def compare_call(owner: str, repo: str, base: str, head: str) -> ApiCall:
    basehead = f"{quote(base, safe='')}...{quote(head, safe='')}"
    return ApiCall("GET", f"{repo_path(owner, repo)}/compare/{basehead}", {"per_page": 1},
                   operation="repos/compare-commits-with-basehead")


def usable(entries: Any, changed_files: Any) -> bool:
    if not isinstance(entries, list) or len(entries) > MAX_COMPARE_FILES:
        return False
    if isinstance(changed_files, int):
        if changed_files != len(entries):
            return False
    elif len(entries) == MAX_COMPARE_FILES:
        return False  # perhaps cut at 300: nothing says it is all
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("filename"), str):
            return False
        if entry.get("patch") is None and (entry.get("changes") or 0) > 0:
            return False  # list-files may carry the patch the comparison left out
    return True


def compare_files(owner: str, repo: str, pull: Mapping[str, Any]) -> Flow[list[Any] | None]:
    """The PR's files from one comparison, or None when list-files must be used."""
    base, head = pull["base"].get("sha"), pull["head"].get("sha")
    if not isinstance(base, str) or not isinstance(head, str):
        return None
    result = yield compare_call(owner, repo, base, head)
    if result.status != 200 or not isinstance(result.data, Mapping):
        return None
    entries = result.data.get("files")
    if not isinstance(entries, list) or not usable(entries, pull.get("changed_files")):
        return None
    return entries
