"""Full texts of many files at given revisions: one GraphQL query, REST where it falls short.

GraphQL answers every file of a batch at once; a file it cannot give whole (text cut at
512,000 bytes, an error, a blob that is not valid UTF-8, whose exact bytes matter for the
notice) is read over the contents API, as every file was before. Outcomes and notices
are the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from bot.github.calls import RAW_MEDIA, ApiCall, Flow, GitHubError, repo_path
from bot.github.graphql import GitObject, expression, fetch_objects
from bot.sources.files import decode_text

Key = tuple[str, str]  # (path, revision)


@dataclass(frozen=True)
class Fetched:
    text: str | None
    problem: str | None = None  # why there is no (exact) text: a notice for the file
    missing: bool = False  # the file does not exist at that revision


def get_file(owner: str, repo: str, path: str, ref: str) -> Flow[bytes | None]:
    """A file's raw bytes at `ref` (contents API), or None when it does not exist there."""
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


def _too_big(cap: int) -> str:
    return f"full text skipped: larger than {cap // 1024} KiB"


def from_object(obj: GitObject, key: Key, cap: int) -> Fetched | None:
    """The outcome GraphQL's answer settles, or None when the file must be read over REST."""
    if obj.kind == "missing":
        return Fetched(None, f"not found at {key[1][:7]}", missing=True)
    if obj.kind != "blob":
        return None
    if obj.byte_size is not None and obj.byte_size > cap:
        return Fetched(None, _too_big(cap))
    if obj.binary:
        return Fetched(None, "binary file")
    if obj.complete_text and obj.text is not None and "\ufffd" not in obj.text:
        return Fetched(obj.text)
    return None


def read_rest(owner: str, repo: str, key: Key, cap: int) -> Flow[Fetched]:
    path, ref = key
    data = yield from get_file(owner, repo, path, ref)
    if data is None:
        return Fetched(None, f"not found at {ref[:7]}", missing=True)
    if len(data) > cap:
        return Fetched(None, _too_big(cap))
    text, problem = decode_text(data)
    return Fetched(text, problem)


def read_texts(
    owner: str, repo: str, keys: Sequence[Key], cap: int, extra: Sequence[str] = ()
) -> Flow[tuple[dict[Key, Fetched], dict[str, GitObject]]]:
    """Each key's outcome, plus the raw objects of the `extra` expressions (directories)."""
    wanted = list(dict.fromkeys(keys))
    exprs = [expression(ref, path) for path, ref in wanted]
    objects: dict[str, GitObject] = {}
    if wanted or extra:
        objects = yield from fetch_objects(owner, repo, [*exprs, *extra])
    out: dict[Key, Fetched] = {}
    for key, expr in zip(wanted, exprs, strict=True):
        settled = from_object(objects[expr], key, cap)
        if settled is None:
            settled = yield from read_rest(owner, repo, key, cap)
        out[key] = settled
    return out, {expr: objects[expr] for expr in extra}
