"""Explicit suite lists: where a repository names the test methods its CI runs
(SGLang's `run_suite.py`: `TestFile("nightly/test_x.py", test_methods=["TestX.test_y"])`,
a list of `test_x.py::test_y` ids). A test method that such lists never named was never
run by them: deleting it stops nothing.

The lists read are those the PR changes (their base side) and, through the RepoView,
files named `*suite*` in the test file's directory and its parents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile

_METHOD_RE = re.compile(r"[.:](test\w*)")  # `TestX.test_y`, `test_x.py::test_y`
_PATH_RE = re.compile(r"[\w./-]+\.py\b")
_WINDOW = 4  # lines of one entry: the file's path, then its method selection
_MAX_LISTS = 8


def _lists(test_path: str, files: Iterable[ChangedFile], repo: RepoView | None) -> Iterator[str]:
    name = test_path.rsplit("/", 1)[-1]
    seen: set[str] = set()
    for f in files:
        if f.path != test_path and f.base_text and name in f.base_text:
            seen.add(f.path)
            yield f.base_text
    if repo is None:
        return
    parts = test_path.split("/")[:-1]
    for depth in range(len(parts), -1, -1):
        for path in repo.list_dir("/".join(parts[:depth])) or ():
            low = path.rsplit("/", 1)[-1].lower()
            if "suite" in low and path not in seen and len(seen) < _MAX_LISTS:
                seen.add(path)
                text = repo.read(path)
                if text and name in text:
                    yield text


def never_listed(test_path: str, method: str, files: Iterable[ChangedFile],
                 repo: RepoView | None) -> bool:
    """Whether the suite lists that name `test_path` all select methods of it, none of
    them `method` (a file a list runs whole runs every method)."""
    name = test_path.rsplit("/", 1)[-1]
    found = False
    for text in _lists(test_path, files, repo):
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if name not in line or not any(p.endswith(name) for p in _PATH_RE.findall(line)):
                continue
            entry = [line]
            for following in lines[i + 1:i + _WINDOW]:
                if _PATH_RE.search(following):
                    break  # the next entry
                entry.append(following)
            methods = {m for e in entry for m in _METHOD_RE.findall(e.split(name, 1)[-1])}
            if not methods:
                return False  # run whole somewhere
            if method in methods:
                return False
            found = True
    return found
