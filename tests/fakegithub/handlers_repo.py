"""Installation tokens and repository contents."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from .auth import mint_installation_token
from .context import Ctx, Handler
from .errors import ApiError, Reply, not_found, unprocessable
from .shapes import HTML, iso, node_id, user_id
from .state import fake_sha, git_blob_sha

ONE_MB = 1024 * 1024
MAX_DIR_ENTRIES = 1000
_LEVELS = {"read": 1, "write": 2, "admin": 3}


def create_installation_token(ctx: Ctx) -> Reply:
    installation = ctx.state.installations.get(ctx.int_param("installation_id"))
    if installation is None:
        raise not_found()
    if installation.suspended:
        raise ApiError(403, "This installation has been suspended")
    wanted: set[str] = set()
    for name in ctx.body.get("repositories", []):
        wanted.add(f"{installation.account}/{name}")
    for repo_id in ctx.body.get("repository_ids", []):
        repo = ctx.state.repo_by_id(repo_id)
        wanted.add(repo.full_name if repo else f"#{repo_id}")
    if any(name not in ctx.state.repos or not installation.covers(name) for name in wanted):
        raise unprocessable(
            "There is at least one repository that does not exist or is not accessible to the "
            "parent installation."
        )
    permissions = ctx.body.get("permissions")
    if permissions and any(
        _LEVELS.get(installation.permissions.get(key, ""), 0) < _LEVELS.get(level, 9)
        for key, level in permissions.items()
    ):
        raise unprocessable("The permissions requested are not granted to this installation.")
    token = mint_installation_token(
        ctx.state, installation, ctx.now, frozenset(wanted) or None, permissions
    )
    answer: dict[str, Any] = {
        "token": token.value,
        "expires_at": iso(token.expires_at),
        "permissions": token.permissions,
        "repository_selection": "all" if installation.repos is None else "selected",
    }
    if wanted:
        answer["repositories"] = [ctx.shapes.repo(ctx.state.repos[n]) for n in sorted(wanted)]
    return Reply(status=201, json=answer)


def _links(ctx: Ctx, path: str, ref: str, sha: str, kind: str) -> dict[str, Any]:
    api = f"{ctx.shapes.repo_api(ctx.full_name)}"
    url = f"{api}/contents/{path}?ref={ref}"
    git_url = f"{api}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
    html_url = f"{HTML}/{ctx.full_name}/{'tree' if kind == 'dir' else 'blob'}/{ref}/{path}"
    return {
        "url": url, "git_url": git_url, "html_url": html_url,
        "download_url": f"https://raw.githubusercontent.com/{ctx.full_name}/{ref}/{path}"
        if kind == "file" else None,
        "_links": {"self": url, "git": git_url, "html": html_url},
    }


def _entry(ctx: Ctx, path: str, ref: str, data: bytes | None) -> dict[str, Any]:
    kind = "dir" if data is None else "file"
    sha = fake_sha(ctx.full_name, ref, path) if data is None else git_blob_sha(data)
    return {
        "type": kind, "size": 0 if data is None else len(data), "name": path.rsplit("/", 1)[-1],
        "path": path, "sha": sha, **_links(ctx, path, ref, sha, kind),
    }


def _file_json(ctx: Ctx, path: str, ref: str, data: bytes, *, with_content: bool
               ) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode()
    # github.com wraps base64 content at 60 columns, with a trailing newline.
    wrapped = "".join(encoded[i : i + 60] + "\n" for i in range(0, len(encoded), 60))
    return _entry(ctx, path, ref, data) | {
        "content": wrapped if with_content else "",
        "encoding": "base64" if with_content else "none",
    }


def get_content(ctx: Ctx) -> Reply:
    assert ctx.repo is not None
    ref = str(ctx.query.get("ref") or ctx.repo.default_branch)
    files = ctx.repo.files.get(ref)
    if files is None:
        raise ApiError(404, f"No commit found for the ref {ref}")
    path = ctx.params["path"].strip("/")
    data = files.get(path)
    if data is None:
        prefix = f"{path}/" if path else ""
        children = sorted({p[len(prefix):].split("/", 1)[0] for p in files if p.startswith(prefix)})
        if not children:
            raise not_found()
        entries = [
            _entry(ctx, f"{prefix}{name}", ref, files.get(f"{prefix}{name}"))
            for name in children[:MAX_DIR_ENTRIES]
        ]
        if "object" in ctx.accept:
            return Reply(json=_entry(ctx, path, ref, None) | {"entries": entries})
        return Reply(json=entries)
    if "raw" in ctx.accept:
        media = "application/vnd.github.v3.raw" if ".v3.raw" in ctx.accept else (
            "application/vnd.github.raw")
        return Reply(raw=data, content_type=f"{media}; charset=utf-8",
                     headers={"x-github-media-type": "github.v3; param=raw"})
    if len(data) > ONE_MB and "object" not in ctx.accept:
        raise ApiError(
            403,
            "This API returns blobs up to 1 MB in size. The requested blob is too large to "
            "fetch via the API, but you can use the Git Data API to request blobs up to 100 MB "
            "in size.",
            errors=[{"resource": "Blob", "field": "data", "code": "too_large"}],
        )
    return Reply(json=_file_json(ctx, path, ref, data, with_content=len(data) <= ONE_MB))


def put_content(ctx: Ctx) -> Reply:
    assert ctx.repo is not None
    path = ctx.params["path"].strip("/")
    if not path:
        raise unprocessable("Invalid request.\n\n\"path\" wasn't supplied.")
    permissions = ctx.principal.token.permissions if ctx.principal.token else None
    if path.startswith(".github/workflows/") and permissions is not None and (
        permissions.get("workflows") != "write"
    ):
        raise ApiError(403, f"refusing to allow a GitHub App to create or update workflow "
                            f"`{path}` without `workflows` permission")
    try:
        data = base64.b64decode(ctx.body["content"], validate=True)
    except binascii.Error as exc:
        raise unprocessable("content is not valid Base64") from exc
    branch = ctx.body.get("branch", ctx.repo.default_branch)
    files = ctx.repo.files.get(branch)
    if files is None:
        if branch != ctx.repo.default_branch:
            raise ApiError(404, f"Branch {branch} not found")
        files = ctx.repo.files.setdefault(branch, {})
    current = files.get(path)
    if current is not None:
        if "sha" not in ctx.body:
            raise unprocessable("Invalid request.\n\n\"sha\" wasn't supplied.")
        if ctx.body["sha"] != git_blob_sha(current):
            raise ApiError(409, f"{path} does not match {ctx.body['sha']}")
    files[path] = data
    commit_sha = fake_sha(ctx.full_name, branch, path, data)
    ctx.repo.commits.add(commit_sha)
    login, _ = ctx.acting_user()
    person = {"name": login, "email": f"{user_id(login)}+{login}@users.noreply.github.com",
              "date": iso(ctx.now)}
    api = ctx.shapes.repo_api(ctx.full_name)
    content = _entry(ctx, path, branch, data)
    commit = {
        "sha": commit_sha, "node_id": node_id("Commit", user_id(commit_sha)),
        "url": f"{api}/git/commits/{commit_sha}",
        "html_url": f"{HTML}/{ctx.full_name}/commit/{commit_sha}",
        "author": person, "committer": person, "message": ctx.body["message"],
        "tree": {"url": f"{api}/git/trees/{commit_sha}", "sha": commit_sha},
        "parents": [], "verification": {"verified": False, "reason": "unsigned",
                                        "signature": None, "payload": None, "verified_at": None},
    }
    return Reply(status=201 if current is None else 200,
                 json={"content": content, "commit": commit})


HANDLERS: dict[str, Handler] = {
    "apps/create-installation-access-token": create_installation_token,
    "repos/get-content": get_content,
    "repos/create-or-update-file-contents": put_content,
}
