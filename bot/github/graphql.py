"""Many git objects (file texts, directory listings) in one GraphQL query.

`repository { o0: object(expression: "<rev>:<path>") { ... on Blob { … } ... on Tree { … } } }`
answers any number of files and directories at any revisions in one request, where the
contents API needs one request each. What GitHub documents and does, and this follows:

- An expression that names nothing (no such path or revision) is `null`, not an error.
- `Blob.text` is null for a binary blob and cut at 512,000 bytes (`isTruncated`); the
  caller reads such a file over REST instead (the contents API serves up to 100 MB raw).
- A failed field is `null` with an entry in `errors` whose `path` starts at the field; a
  query GitHub rejects (parse error, rate limit, timeout) has errors and no data. Either
  way the object is "unknown" here, never guessed: the caller falls back to REST.
- Objects are not connections, so the 500,000-node limit does not bind; the size of the
  answer does (GitHub gives a query 10 seconds), hence at most `MAX_OBJECTS` per query,
  and a batch that fails as a timeout does is halved (twice at most) before giving up.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.github.calls import Flow, graphql

# Objects per query. GitHub documents no alias limit; the answer's size and its 10-second
# budget are what bind. 250 is what a widely used CMS fetches per query against
# github.com (sveltia-cms: "250 files per GraphQL request") and holds a 250-file PR.
MAX_OBJECTS = 250
TEXT_LIMIT = 512_000  # GitHub truncates Blob.text here
MAX_SPLITS = 2  # halvings of a batch that timed out: at most 6 more queries per batch

Kind = Literal["blob", "tree", "missing", "unknown"]

_FIELDS = ("__typename ... on Blob { byteSize isBinary isTruncated text } "
           "... on Tree { entries { name type } }")


@dataclass(frozen=True)
class GitObject:
    kind: Kind
    text: str | None = None  # a blob's text when GitHub gave all of it
    byte_size: int | None = None
    binary: bool = False
    truncated: bool = False
    entries: tuple[tuple[str, str], ...] = ()  # a tree's (name, "blob" | "tree" | "commit")

    @property
    def complete_text(self) -> bool:
        return self.kind == "blob" and self.text is not None and not self.truncated


UNKNOWN = GitObject("unknown")
MISSING = GitObject("missing")


def expression(rev: str, path: str) -> str:
    """The `object(expression:)` argument for `path` at `rev` (the root: "rev:")."""
    return f"{rev}:{path.strip('/')}"


def objects_query(count: int) -> str:
    """A query for `count` objects, passed as variables $e0… (no string escaping needed)."""
    params = "".join(f", $e{i}: String!" for i in range(count))
    selections = " ".join(f"o{i}: object(expression: $e{i}) {{ {_FIELDS} }}"
                          for i in range(count))
    return (f"query($owner: String!, $name: String!{params}) "
            f"{{ repository(owner: $owner, name: $name) {{ {selections} }} }}")


def _parse(node: Any) -> GitObject:
    if node is None:
        return MISSING
    if not isinstance(node, Mapping):
        return UNKNOWN
    kind = node.get("__typename")
    if kind == "Blob":
        text = node.get("text")
        size = node.get("byteSize")
        return GitObject("blob", text if isinstance(text, str) else None,
                         size if isinstance(size, int) else None, bool(node.get("isBinary")),
                         bool(node.get("isTruncated")))
    if kind == "Tree":
        entries = tuple(
            (str(e["name"]), str(e.get("type"))) for e in node.get("entries") or []
            if isinstance(e, Mapping) and isinstance(e.get("name"), str)
        )
        return GitObject("tree", entries=entries)
    return UNKNOWN  # a commit or tag: not a file or directory


def _failed_aliases(errors: Any) -> tuple[set[str], bool]:
    """(aliases with a field error, whether an error hit the query as a whole)."""
    failed: set[str] = set()
    whole = False
    for error in errors if isinstance(errors, list) else []:
        path = error.get("path") if isinstance(error, Mapping) else None
        if isinstance(path, list) and len(path) >= 2 and path[0] == "repository":
            failed.add(str(path[1]))
        else:
            whole = True
    return failed, whole


def _batches(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), MAX_OBJECTS):
        yield items[start : start + MAX_OBJECTS]


def _worth_splitting(status: int, body: Mapping[str, Any], batch: Sequence[str]) -> bool:
    """A query that failed as a whole without a typed error (GitHub's "Something went
    wrong … may be the result of a timeout", a 502): a smaller answer may get through.
    Typed errors (RATE_LIMITED, NOT_FOUND, FORBIDDEN) would fail again."""
    if len(batch) < 2 or body.get("data") is not None:
        return False
    if status in {502, 504}:
        return True
    errors = body.get("errors")
    return status == 200 and isinstance(errors, list) and bool(errors) and not any(
        isinstance(e, Mapping) and e.get("type") for e in errors)


def _query(owner: str, repo: str, batch: Sequence[str], splits: int
           ) -> Flow[dict[str, GitObject]]:
    variables: dict[str, Any] = {"owner": owner, "name": repo}
    variables.update({f"e{i}": expr for i, expr in enumerate(batch)})
    result = yield graphql(objects_query(len(batch)), variables)
    body = result.data if isinstance(result.data, Mapping) else {}
    if splits > 0 and _worth_splitting(result.status, body, batch):
        half = len(batch) // 2
        found = yield from _query(owner, repo, batch[:half], splits - 1)
        found.update((yield from _query(owner, repo, batch[half:], splits - 1)))
        return found
    data = body.get("data") if result.status == 200 else None
    repository = data.get("repository") if isinstance(data, Mapping) else None
    failed, whole = _failed_aliases(body.get("errors"))
    found = {}
    for i, expr in enumerate(batch):
        alias = f"o{i}"
        if not isinstance(repository, Mapping) or alias in failed or (
                whole and alias not in repository):
            found[expr] = UNKNOWN
        else:
            found[expr] = _parse(repository.get(alias))
    return found


def fetch_objects(owner: str, repo: str, expressions: Sequence[str]) -> Flow[dict[str, GitObject]]:
    """Each expression's object; UNKNOWN for whatever GitHub did not answer.

    A batch that fails as if it were too big is split in halves, at most `MAX_SPLITS`
    times, before its objects are given up as unknown (the caller then uses REST).
    """
    wanted = list(dict.fromkeys(expressions))
    found: dict[str, GitObject] = {}
    for batch in _batches(wanted):
        found.update((yield from _query(owner, repo, batch, MAX_SPLITS)))
    return found
