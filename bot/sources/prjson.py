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
    if not isinstance(status, str):
        raise SourceError(f"{where}.status: expected a string, got {type(status).__name__}")
    if status not in _STATUSES:
        raise SourceError(f"{where}.status: unknown status {status[:40]!r}")
    contents = entry.get("contents")
    if contents is None:
        contents = {}
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
    value = data.get(side)
    if value is None:
        value = {}
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


def _author(user: Any) -> str | None:
    if user is None:
        return None
    if not isinstance(user, dict):
        raise SourceError(f"user: expected an object with login, got {type(user).__name__}")
    return _opt_str(user.get("login"), "user.login")


def _labels(labels: Any) -> tuple[str, ...]:
    """GitHub's label objects ({name: ...}) or plain names."""
    if labels is None:
        return ()
    if not isinstance(labels, list):
        raise SourceError(f"labels: expected a list, got {type(labels).__name__}")
    names: list[str] = []
    for index, label in enumerate(labels):
        if isinstance(label, str):
            names.append(label)
            continue
        if not isinstance(label, dict):
            raise SourceError(f"labels[{index}]: expected an object with name or a string")
        name = label.get("name")
        if not isinstance(name, str):
            raise SourceError(f"labels[{index}].name: required string")
        names.append(name)
    return tuple(names)


def snapshot_from_pr_data(data: Any) -> PullRequestSnapshot:
    if not isinstance(data, dict):
        raise SourceError("PR JSON must be an object")
    files = data.get("files")
    if not isinstance(files, list):
        raise SourceError("files: required list of changed files")
    base_ref, base_sha = _ref(data, "base")
    head_ref, head_sha = _ref(data, "head")
    number = data.get("number")
    if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
        raise SourceError(f"number: expected an integer or null, got {type(number).__name__}")
    return PullRequestSnapshot(
        files=tuple(_file(entry, i) for i, entry in enumerate(files)),
        repo=_opt_str(data.get("repo"), "repo"),
        number=number,
        title=_opt_str(data.get("title"), "title") or "",
        body=_opt_str(data.get("body"), "body") or "",
        author=_author(data.get("user")),
        base_ref=base_ref,
        base_sha=base_sha,
        head_ref=head_ref,
        head_sha=head_sha,
        labels=_labels(data.get("labels")),
        repo_view=_repo_view(data),
    )


def snapshot_from_pr_json(raw: bytes) -> PullRequestSnapshot:
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"not valid JSON: {exc}") from None
    except RecursionError:
        # json's C scanner recurses per level; nothing GitHub sends nests this deep
        raise SourceError("not valid PR JSON: nested too deeply") from None
    return snapshot_from_pr_data(data)
