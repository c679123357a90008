"""A small subset of GitHub's issue-search syntax, applied to the fake's pull requests."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from .state import PullRequest

_TOKEN = re.compile(r'(-?)([\w-]+):("[^"]*"|\S+)|"([^"]*)"|(\S+)')
KIND_QUALIFIERS = {("is", "pr"), ("is", "pull-request"), ("is", "issue"), ("type", "pr"),
                   ("type", "issue")}
Predicate = Callable[[PullRequest], bool]


def _parse_day(text: str) -> tuple[datetime, datetime]:
    """A date or date-time, as the instant range it denotes (a bare date is a whole day)."""
    if "T" in text:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        return moment, moment
    start = datetime.fromisoformat(text).replace(tzinfo=UTC)
    return start, start + timedelta(days=1) - timedelta(microseconds=1)


def date_predicate(spec: str) -> Callable[[datetime | None], bool]:
    if ".." in spec:
        low, high = spec.split("..", 1)
        lo = None if low == "*" else _parse_day(low)[0]
        hi = None if high == "*" else _parse_day(high)[1]
        return lambda d: d is not None and (lo is None or d >= lo) and (hi is None or d <= hi)
    op, text = re.fullmatch(r"(>=|<=|>|<)?(.+)", spec).groups()  # type: ignore[union-attr]
    first, last = _parse_day(text)
    tests: dict[str | None, Callable[[datetime], bool]] = {
        ">=": lambda d: d >= first, "<=": lambda d: d <= last,
        ">": lambda d: d > last, "<": lambda d: d < first,
        None: lambda d: first <= d <= last,
    }
    chosen = tests[op]
    return lambda d: d is not None and chosen(d)


@dataclass
class SearchQuery:
    repos: set[str] = field(default_factory=set)
    names_kind: bool = False
    predicates: list[Predicate] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    in_fields: set[str] = field(default_factory=set)

    def matches(self, pr: PullRequest) -> bool:
        if self.repos and pr.repo not in self.repos:
            return False
        if not all(check(pr) for check in self.predicates):
            return False
        fields = self.in_fields or {"title", "body"}
        haystack = " ".join(
            (pr.title if "title" in fields else "", (pr.body or "") if "body" in fields else "")
        ).lower()
        return all(term.lower() in haystack for term in self.terms)


def _qualifier(key: str, value: str) -> Predicate | None:
    is_values: dict[str, Predicate] = {
        "pr": lambda p: True, "pull-request": lambda p: True, "issue": lambda p: False,
        "open": lambda p: p.state == "open", "closed": lambda p: p.state == "closed",
        "merged": lambda p: p.merged_at is not None,
        "unmerged": lambda p: p.state == "closed" and p.merged_at is None,
        "draft": lambda p: p.draft,
    }
    if key in {"is", "type"}:
        return is_values.get(value)
    if key == "state":
        return lambda p: p.state == value
    if key == "author":
        return lambda p: p.user == value
    if key == "label":
        return lambda p: value in p.labels
    if key == "head":
        return lambda p: p.head_ref == value
    if key == "base":
        return lambda p: p.base_ref == value
    if key == "draft":
        return lambda p: p.draft == (value == "true")
    dated = {"merged": "merged_at", "created": "created_at", "updated": "updated_at",
             "closed": "closed_at"}
    if key in dated:
        matches = date_predicate(value)
        attribute = dated[key]
        return lambda p: matches(getattr(p, attribute))
    return None


def _negate(check: Predicate) -> Predicate:
    return lambda pr: not check(pr)


def parse_query(q: str) -> SearchQuery:
    """Raises ValueError for a date GitHub would also refuse."""
    query = SearchQuery()
    for found in _TOKEN.finditer(q):
        negated, key, raw_value, quoted, bare = found.groups()
        if key is None:
            query.terms.append(quoted if quoted is not None else bare)
            continue
        value = raw_value.strip('"')
        key = key.lower()
        if (key, value) in KIND_QUALIFIERS:
            query.names_kind = True
        if key == "repo":
            query.repos.add(value)
        elif key == "in":
            query.in_fields.update(value.split(","))
        else:
            check = _qualifier(key, value)
            if check is None:
                query.terms.append(found.group(0))
            elif negated:
                query.predicates.append(_negate(check))
            else:
                query.predicates.append(check)
    return query
