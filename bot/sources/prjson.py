"""Snapshot from a PR JSON file: GitHub's PR + list-files shapes, optional contents."""

from __future__ import annotations

import json
from typing import Any

from bot.core.repo_view import MappedRepoView
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from bot.sources import SourceError
from bot.sources.files import from_github_entry

_STATUSES = {"added", "removed", "modified", "renamed", "copied", "changed", "unchanged"}


def _opt_str(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise SourceError(f"{where}: expected a string or null, got {type(value).__name__}")


def _file(entry: Any, index: int) -> ChangedFile:
    where = f"files[{index}]"
    if not isinstance(entry, dict):
        raise SourceError(f"{where}: expected an object")
    filename = entry.get("filename")
    if not isinstance(filename, str) or not filename:
        raise SourceError(f"{where}.filename: required string")
    status = entry.get("status", "modified")
    if status not in _STATUSES:
        raise SourceError(f"{where}.status: unknown status {status!r}")
    contents = entry.get("contents") or {}
    if not isinstance(contents, dict):
        raise SourceError(f"{where}.contents: expected an object with base/head")
    return from_github_entry(
        filename,
        status,
        _opt_str(entry.get("patch"), f"{where}.patch"),
        _opt_str(entry.get("previous_filename"), f"{where}.previous_filename"),
        _opt_str(contents.get("base"), f"{where}.contents.base"),
        _opt_str(contents.get("head"), f"{where}.contents.head"),
    )


def _ref(data: dict[str, Any], side: str) -> tuple[str | None, str | None]:
    value = data.get(side) or {}
    if not isinstance(value, dict):
        raise SourceError(f"{side}: expected an object with ref and sha")
    return _opt_str(value.get("ref"), f"{side}.ref"), _opt_str(value.get("sha"), f"{side}.sha")


def _repo_view(data: dict[str, Any]) -> MappedRepoView | None:
    """`repo_files`: an optional {path: text} map of files at the base revision."""
    raw = data.get("repo_files")
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise SourceError("repo_files: expected an object mapping paths to file texts")
    return MappedRepoView(dict(raw))


def snapshot_from_pr_data(data: Any) -> PullRequestSnapshot:
    if not isinstance(data, dict):
        raise SourceError("PR JSON must be an object")
    files = data.get("files")
    if not isinstance(files, list):
        raise SourceError("files: required list of changed files")
    base_ref, base_sha = _ref(data, "base")
    head_ref, head_sha = _ref(data, "head")
    user = data.get("user")
    labels = data.get("labels") or []
    number = data.get("number")
    return PullRequestSnapshot(
        files=tuple(_file(entry, i) for i, entry in enumerate(files)),
        repo=_opt_str(data.get("repo"), "repo"),
        number=number if isinstance(number, int) else None,
        title=_opt_str(data.get("title"), "title") or "",
        body=_opt_str(data.get("body"), "body") or "",
        author=user.get("login") if isinstance(user, dict) else None,
        base_ref=base_ref,
        base_sha=base_sha,
        head_ref=head_ref,
        head_sha=head_sha,
        labels=tuple(
            label["name"] if isinstance(label, dict) else str(label) for label in labels
        ),
        repo_view=_repo_view(data),
    )


def snapshot_from_pr_json(raw: bytes) -> PullRequestSnapshot:
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"not valid JSON: {exc}") from None
    return snapshot_from_pr_data(data)
