"""Turn one commit of a local git mirror into an eval case (PR JSON + empty labels).

Usage: python eval/make_case.py GIT_DIR OWNER/NAME SHA SAMPLE [--out DIR]

The case holds the commit's real message (subject = title, rest = body), every
changed file's GitHub-style patch (hunks only, no headers), the base and head text
of each changed file up to 256 KiB, and the base-revision siblings of each changed
file (same directory, same extension, at most 8 per directory and 64 KiB each) as
``repo_files`` so rules that look at the repository's conventions have them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

MAX_TEXT = 256 * 1024
MAX_SIBLING = 64 * 1024
SIBLINGS_PER_DIR = 8
STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied",
          "T": "modified"}


def git(git_dir: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True,
                          capture_output=True).stdout


def text_at(git_dir: str, rev: str, path: str, limit: int) -> str | None:
    try:
        size = int(git(git_dir, "cat-file", "-s", f"{rev}:{path}"))
    except subprocess.CalledProcessError:
        return None
    if size > limit:
        return None
    raw = git(git_dir, "show", f"{rev}:{path}")
    if b"\0" in raw:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def file_patch(git_dir: str, parent: str, sha: str, path: str, old: str | None) -> str | None:
    paths = [old, path] if old else [path]
    out = git(git_dir, "diff", "-M", "--no-color", "--no-ext-diff", parent, sha, "--", *paths)
    text = out.decode("utf-8", errors="replace")
    if "Binary files" in text and "@@" not in text:
        return None
    idx = text.find("\n@@")
    return text[idx + 1:] if idx >= 0 else None


def split_of(case_id: str) -> str:
    # 30 % of cases, chosen by a hash of the id, are our own holdout.
    return "holdout" if int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % 10 < 3 else "dev"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("git_dir")
    ap.add_argument("repo")
    ap.add_argument("sha")
    ap.add_argument("sample", choices=["ordinary", "ci-fix", "targeted"])
    ap.add_argument("--out", default=str(Path(__file__).parent / "prs"))
    a = ap.parse_args()
    sha = git(a.git_dir, "rev-parse", a.sha).decode().strip()
    parent = git(a.git_dir, "rev-parse", f"{sha}^").decode().strip()
    message = git(a.git_dir, "log", "-1", "--format=%B", sha).decode("utf-8", "replace")
    title, _, body = message.partition("\n")
    m = re.search(r"\(#(\d+)\)\s*$", title)
    number = int(m.group(1)) if m else None
    rows = git(a.git_dir, "diff-tree", "-r", "-M", "--no-commit-id", "--name-status",
               parent, sha).decode("utf-8", "replace").splitlines()
    files = []
    repo_files: dict[str, str] = {}
    seen_dirs: set[str] = set()
    changed = set()
    for row in rows:
        parts = row.split("\t")
        code, path = parts[0][0], parts[-1]
        old = parts[1] if code in "RC" and len(parts) == 3 else None
        changed.add(path)
        entry: dict[str, object] = {"filename": path, "status": STATUS.get(code, "modified")}
        if old:
            entry["previous_filename"] = old
        patch = file_patch(a.git_dir, parent, sha, path, old)
        if patch is not None:
            entry["patch"] = patch
        base = text_at(a.git_dir, parent, old or path, MAX_TEXT) if code != "A" else None
        head = text_at(a.git_dir, sha, path, MAX_TEXT) if code != "D" else None
        contents = {k: v for k, v in (("base", base), ("head", head)) if v is not None}
        if contents:
            entry["contents"] = contents
        files.append(entry)
        seen_dirs.add(str(PurePosixPath(old or path).parent))
    for d in sorted(seen_dirs):
        where = [f"{d}/"] if d != "." else []  # the root: no path argument at all
        tree = git(a.git_dir, "ls-tree", "--name-only", parent, *where)
        names = tree.decode("utf-8", "replace").splitlines()
        exts = {PurePosixPath(p).suffix for p in changed if str(PurePosixPath(p).parent) == d}
        picked = [n for n in sorted(names) if PurePosixPath(n).suffix in exts
                  and n not in changed][:SIBLINGS_PER_DIR]
        for n in picked:
            t = text_at(a.git_dir, parent, n, MAX_SIBLING)
            if t is not None:
                repo_files[n] = t
    case_id = f"{a.repo}@{sha[:12]}"
    case = {
        "id": case_id,
        "repo": a.repo,
        "commit": sha,
        "url": f"https://github.com/{a.repo}/commit/{sha}",
        "pr_number": number,
        "sample": a.sample,
        "split": split_of(case_id),
        "pr": {
            "repo": a.repo, "number": number, "title": title.strip(), "body": body.strip(),
            "base": {"sha": parent}, "head": {"sha": sha}, "files": files,
            "repo_files": repo_files,
        },
        "labels": {},
    }
    out = Path(a.out) / a.repo.replace("/", "__")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{sha[:12]}.json"
    path.write_text(json.dumps(case, indent=1, ensure_ascii=False) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
