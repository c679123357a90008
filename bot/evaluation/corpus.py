"""The labeled PR corpus (`eval/prs/`): one JSON file per real commit or pull request."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class CorpusError(ValueError):
    """A case file that cannot be read or does not have the documented shape."""


@dataclass(frozen=True)
class Spot:
    """Where a labeled problem is: a head-side line, or the PR itself (path/line None)."""

    path: str | None
    line: int | None


@dataclass(frozen=True)
class Label:
    rule: str
    fires: bool
    why: str
    at: tuple[Spot, ...] = ()


@dataclass(frozen=True)
class Case:
    id: str
    repo: str
    sample: str  # "ordinary" | "ci-fix" | "targeted"
    split: str  # "dev" | "holdout"
    url: str
    pr: Mapping[str, Any]  # PR JSON as `review --pr` reads it (+ repo_files)
    labels: Mapping[str, Label]


def _spot(raw: Any, where: str) -> Spot:
    if not isinstance(raw, dict):
        raise CorpusError(f"{where}: expected {{path, line}}")
    path, line = raw.get("path"), raw.get("line")
    if path is not None and not isinstance(path, str):
        raise CorpusError(f"{where}.path: expected a string or null")
    if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
        raise CorpusError(f"{where}.line: expected an integer or null")
    return Spot(path, line)


def _label(rule: str, raw: Any, where: str) -> Label:
    if not isinstance(raw, dict) or not isinstance(raw.get("fires"), bool):
        raise CorpusError(f"{where}: expected {{fires: true|false, why, at}}")
    spots = raw.get("at") or []
    if not isinstance(spots, list):
        raise CorpusError(f"{where}.at: expected a list")
    return Label(rule, raw["fires"], str(raw.get("why") or ""),
                 tuple(_spot(s, f"{where}.at[{i}]") for i, s in enumerate(spots)))


def parse_case(data: Any, where: str) -> Case:
    if not isinstance(data, dict):
        raise CorpusError(f"{where}: expected a JSON object")
    for key in ("id", "repo", "pr"):
        if key not in data:
            raise CorpusError(f"{where}: missing `{key}`")
    labels = data.get("labels") or {}
    if not isinstance(labels, dict):
        raise CorpusError(f"{where}.labels: expected an object")
    return Case(
        id=str(data["id"]), repo=str(data["repo"]), sample=str(data.get("sample") or ""),
        split=str(data.get("split") or "dev"), url=str(data.get("url") or ""),
        pr=data["pr"],
        labels={rule: _label(rule, raw, f"{where}.labels.{rule}")
                for rule, raw in labels.items()},
    )


def case_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.json") if p.is_file())


def load_cases(root: Path) -> Iterator[Case]:
    """Every case under `root`, in path order."""
    if not root.is_dir():
        raise CorpusError(f"{root}: no such corpus directory")
    for path in case_files(root):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise CorpusError(f"{path}: cannot read: {exc}") from None
        yield parse_case(data, str(path))
