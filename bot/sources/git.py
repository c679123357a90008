"""Snapshot from a local git range (`--git BASE..HEAD`): the patch plus full texts."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from bot.core.diff import parse_unified_diff
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from bot.sources import SourceError
from bot.sources.files import MAX_TEXT_BYTES, decode_text, from_patch
from bot.sources.git_view import GitRepoView


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise SourceError("git is not installed") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SourceError(f"git {args[0]} failed: {message[-1] if message else 'error'}")
    return done.stdout


def split_range(spec: str, repo: Path) -> tuple[str, str]:
    """BASE..HEAD → (BASE, HEAD); BASE...HEAD compares against their merge base."""
    if "..." in spec:
        left, right = spec.split("...", 1)
        right = right or "HEAD"
        base = _git(repo, "merge-base", left, right).decode().strip()
        return base, right
    if ".." in spec:
        left, right = spec.split("..", 1)
        return left, right or "HEAD"
    return spec, "HEAD"


def read_blobs(repo: Path, specs: Iterable[str]) -> dict[str, bytes | None]:
    """`rev:path` → contents via one `git cat-file --batch` (one process, not one per file)."""
    wanted = list(dict.fromkeys(specs))
    if not wanted:
        return {}
    request = "".join(f"{spec}\n" for spec in wanted).encode("utf-8", "surrogateescape")
    out = _git(repo, "cat-file", "--batch", stdin=request)
    blobs: dict[str, bytes | None] = {}
    pos = 0
    for spec in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] == b"missing":
            blobs[spec] = None
            continue
        size = int(header[2])
        blobs[spec] = out[pos : pos + size] if header[1] == b"blob" else None
        pos += size + 1
    return blobs


def _text(blob: bytes | None) -> str | None:
    if blob is None or len(blob) > MAX_TEXT_BYTES:
        return None
    text, _problem = decode_text(blob)
    return text


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree


def _files(repo: Path, raw: bytes, base: str, head: str,
           wants_contents: Callable[[str], bool]) -> tuple[ChangedFile, ...]:
    """Changed files of a diff, with texts from `base:path` and `head:path` (`:path`: index)."""
    text, _problem = decode_text(raw)
    patches = parse_unified_diff(text if text is not None else raw.decode("utf-8", "replace"))
    specs: list[str] = []
    for patch in patches:
        if patch.binary or not wants_contents(patch.path):
            continue
        if patch.status != "added":
            specs.append(f"{base}:{patch.previous_path or patch.path}")
        if patch.status != "removed":
            specs.append(f"{head}:{patch.path}")
    blobs = read_blobs(repo, specs)
    files = []
    for patch in patches:
        changed = from_patch(patch)
        if not patch.binary and wants_contents(patch.path):
            changed = replace(
                changed,
                base_text=_text(blobs.get(f"{base}:{patch.previous_path or patch.path}")),
                head_text=_text(blobs.get(f"{head}:{patch.path}")),
            )
        files.append(changed)
    return tuple(files)


def snapshot_from_git(
    spec: str,
    repo: Path,
    wants_contents: Callable[[str], bool] = lambda _path: True,
) -> PullRequestSnapshot:
    base, head = split_range(spec, repo)
    raw = _git(repo, "diff", "--no-color", "--no-ext-diff", "-M", base, head, "--")
    message = _git(repo, "log", "-1", "--format=%s%n%n%b", head).decode("utf-8", "replace")
    title, _, body = message.partition("\n\n")
    base_sha = _git(repo, "rev-parse", base).decode().strip()
    return PullRequestSnapshot(
        files=_files(repo, raw, base, head, wants_contents),
        title=title.strip(),
        body=body.strip(),
        base_sha=base_sha,
        head_sha=_git(repo, "rev-parse", head).decode().strip(),
        repo_view=GitRepoView(repo, base_sha),
    )


def snapshot_from_index(
    repo: Path, wants_contents: Callable[[str], bool] = lambda _path: True
) -> PullRequestSnapshot:
    """The staged changes (what `git commit` would record), as pre-commit sees them."""
    try:
        base = _git(repo, "rev-parse", "--verify", "-q", "HEAD").decode().strip()
    except SourceError:
        base = EMPTY_TREE  # no commit yet: everything staged is added
    raw = _git(repo, "diff", "--cached", "--no-color", "--no-ext-diff", "-M", base, "--")
    return PullRequestSnapshot(files=_files(repo, raw, base, "", wants_contents), base_sha=base)


def git_root(start: Path) -> Path | None:
    """The work tree `start` is in, or None outside git (or without git)."""
    try:
        return Path(_git(start, "rev-parse", "--show-toplevel").decode().strip())
    except SourceError:
        return None


def read_file_at(repo: Path, rev: str, path: str) -> str | None:
    return _text(read_blobs(repo, [f"{rev}:{path}"]).get(f"{rev}:{path}"))
