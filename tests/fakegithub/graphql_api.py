"""`POST /graphql`: the part of GitHub's GraphQL API the bot uses, executed for real.

The query is parsed, validated and executed by graphql-core against a subset of GitHub's
public schema (the types and fields below, as GitHub declares them; anything else is
rejected like an unknown field on github.com). Behaviour kept from github.com:

- HTTP 200 for every answered query, errors in `errors` (with `path`, `locations`, and
  GitHub's `type` such as NOT_FOUND); partial data next to field errors.
- `repository(owner:, name:)` the token cannot see: null + NOT_FOUND ("Could not resolve
  to a Repository with the name 'o/r'."); no contents permission: null + FORBIDDEN.
- `object(expression: "<rev>:<path>")`: null for an unknown revision or path; a Tree
  for a directory (entries sorted by name, type "blob"/"tree"); a Blob whose `text` is
  null when binary (a NUL byte in the first 8,000 bytes, as git decides) and cut at
  512,000 bytes with `isTruncated: true`; `expression: "<sha>"` alone is a Commit.
- Its own rate-limit bucket (`x-ratelimit-resource: graphql`, 5,000 points); these
  queries cost 1 point; an exhausted bucket answers 200 with a RATE_LIMITED error.
- No credentials: 401 "This endpoint requires you to be authenticated."
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from graphql import GraphQLError, GraphQLSchema, build_schema, graphql_sync

from .state import Repo, State, git_blob_sha

TEXT_LIMIT = 512_000
BINARY_SNIFF = 8000

SDL = """
scalar GitObjectID
type Query {
  repository(owner: String!, name: String!, followRenames: Boolean = true): Repository
}
type Repository {
  id: ID!
  name: String!
  nameWithOwner: String!
  object(expression: String, oid: GitObjectID): GitObject
}
interface GitObject {
  abbreviatedOid: String!
  id: ID!
  oid: GitObjectID!
}
type Blob implements GitObject {
  abbreviatedOid: String!
  byteSize: Int!
  id: ID!
  isBinary: Boolean
  isTruncated: Boolean!
  oid: GitObjectID!
  text: String
}
type Tree implements GitObject {
  abbreviatedOid: String!
  entries: [TreeEntry!]
  id: ID!
  oid: GitObjectID!
}
type TreeEntry {
  mode: Int!
  name: String!
  object: GitObject
  oid: GitObjectID!
  path: String
  size: Int!
  type: String!
}
type Commit implements GitObject {
  abbreviatedOid: String!
  id: ID!
  oid: GitObjectID!
}
"""


def _blob(data: bytes) -> dict[str, Any]:
    oid = git_blob_sha(data)
    binary = b"\0" in data[:BINARY_SNIFF]
    text = None if binary else data[:TEXT_LIMIT].decode("utf-8", "replace")
    return {"__typename": "Blob", "oid": oid, "abbreviatedOid": oid[:7], "id": f"B_{oid}",
            "byteSize": len(data), "isBinary": binary,
            "isTruncated": not binary and len(data) > TEXT_LIMIT, "text": text}


def _tree(files: dict[str, bytes], folder: str) -> dict[str, Any] | None:
    prefix = f"{folder}/" if folder else ""
    children: dict[str, bytes | None] = {}
    for path, data in files.items():
        if path.startswith(prefix):
            head, _, rest = path[len(prefix):].partition("/")
            children[head] = None if rest else data
    if not children:
        return None
    entries = []
    for name in sorted(children):
        data = children[name]
        sub = f"{prefix}{name}"
        obj = _blob(data) if data is not None else _tree(files, sub)
        assert obj is not None
        entries.append({"name": name, "path": sub, "type": "blob" if data is not None else "tree",
                        "mode": 0o100644 if data is not None else 0o40000,
                        "size": len(data) if data is not None else 0, "oid": obj["oid"],
                        "object": obj})
    oid = git_blob_sha(json.dumps([e["name"] for e in entries]).encode())
    return {"__typename": "Tree", "oid": oid, "abbreviatedOid": oid[:7], "id": f"T_{oid}",
            "entries": entries}


def resolve_object(repo: Repo, state: State, expression: str | None) -> dict[str, Any] | None:
    if not expression:
        return None
    rev, colon, path = expression.partition(":")
    files = repo.files.get(rev)
    if not colon:
        if files is not None or state.knows_commit(repo.full_name, rev):
            return {"__typename": "Commit", "oid": rev, "abbreviatedOid": rev[:7],
                    "id": f"C_{rev}"}
        return None
    if files is None:
        return None
    path = path.strip("/")
    data = files.get(path)
    return _blob(data) if data is not None else _tree(files, path)


@cache
def schema() -> GraphQLSchema:
    built = build_schema(SDL)
    return built


class Resolver:
    """Root value of one query: what the caller may see."""

    def __init__(self, state: State, visible: Any, can_read_contents: bool) -> None:
        self.state = state
        self.visible = visible  # (full_name) -> Repo | None
        self.can_read_contents = can_read_contents

    def repository(self, info: Any, owner: str, name: str, followRenames: bool = True
                   ) -> dict[str, Any] | None:
        repo: Repo | None = self.visible(f"{owner}/{name}")
        if repo is None:
            raise GraphQLError(f"Could not resolve to a Repository with the name "
                               f"'{owner}/{name}'.", extensions={"type": "NOT_FOUND"})
        if not self.can_read_contents:
            raise GraphQLError("Resource not accessible by integration",
                               extensions={"type": "FORBIDDEN"})
        state = self.state

        def resolve(info: Any, expression: str | None = None, oid: str | None = None
                    ) -> dict[str, Any] | None:
            return resolve_object(repo, state, expression)

        return {"id": f"R_{repo.id}", "name": repo.name, "nameWithOwner": repo.full_name,
                "object": resolve}


def _github_error(error: GraphQLError) -> dict[str, Any]:
    out = error.formatted
    extensions = dict(out.pop("extensions", None) or {})
    if "type" in extensions:
        out["type"] = extensions.pop("type")
    if extensions:
        out["extensions"] = extensions
    return dict(out)


def execute(body: Any, root: Resolver) -> dict[str, Any]:
    """The JSON GitHub answers (always with HTTP 200 once the request parsed)."""
    if not isinstance(body, dict) or not isinstance(body.get("query"), str):
        return {"errors": [{"message": "A query attribute must be specified and must be a "
                                       "string."}]}
    variables = body.get("variables")
    result = graphql_sync(schema(), body["query"], root_value=root,
                          variable_values=variables if isinstance(variables, dict) else None)
    answer: dict[str, Any] = {}
    if result.data is not None:
        answer["data"] = result.data
    if result.errors:
        answer["errors"] = [_github_error(e) for e in result.errors]
    return answer
