"""Is a download the PR's decision, or was it already there / the repository's idiom?

A line only re-indented or moved (the same text removed elsewhere in the PR), an
existing download whose arguments were edited (the file fetched the same way at the
base revision), and a fetch most sibling files make the same way (the repository's
convention, e.g. every e2e test pulling its model with `snapshot_download`) are not
new decisions a review should question. When the file's folder is new (or holds only
the PR's new files) the convention is looked for nearby instead (`nearby_convention`):
a new `tests/e2e/x/pooling/` beside e2e tests and a `conftest.py` that all fetch with
`snapshot_download`. A Hub repository id the file (or most of its
siblings) already handed to a loader at the base revision (`model.path=org/name`,
`from_pretrained("org/name")`) was already fetched at run time: an explicit
`huggingface-cli download org/name` added in front of it makes that visible, it does
not add a network dependency.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.siblings import nearby_files
from rules.runtime_download.detect import Fetch

Detect = Callable[[str], Fetch | None]
Nearby = list[tuple[str, str]] | None

MAX_SIBLINGS = 8
# `org/name` as the Hub spells a repository: no scheme, no variable, no path beyond it.
_HUB_ID_RE = re.compile(r"\A[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,95}\Z")


def hub_id(target: str) -> str | None:
    """The Hub repository id a fetch names (`Qwen/Qwen2.5-0.5B`), or None."""
    bare = target.strip("\"'")
    return bare if _HUB_ID_RE.match(bare) and not bare.startswith((".", "~")) else None


def _names(text: str, repo_id: str) -> bool:
    return re.search(rf"(?<![\w./-]){re.escape(repo_id)}(?![\w/-])", text) is not None


def normalized(text: str) -> str:
    return " ".join(text.split())


def removed_in_pr(snapshot: PullRequestSnapshot) -> frozenset[str]:
    """Every removed line of the PR, whitespace-normalized."""
    return frozenset(normalized(line.text) for changed in snapshot.files
                     for line in changed.removed_lines if line.text.strip())


def fetched_at_base(changed: ChangedFile, kind: str, detect: Detect,
                    target: str = "") -> bool:
    """The base revision of this file already fetches the same way (a line there is a
    download of the same kind, not merely a mention such as an import), or already
    names the same Hub repository id (see the module docstring)."""
    if changed.base_text is not None:
        lines: Iterable[str] = changed.base_text.splitlines()
    else:
        lines = (line.text for line in changed.removed_lines)
    repo_id = hub_id(target)
    for text in lines:
        if repo_id is not None and repo_id in text and _names(text, repo_id):
            return True
        if kind in text:
            fetch = detect(text)
            if fetch is not None and fetch.kind == kind:
                return True
    return False


def sibling_convention(view: RepoView | None, changed: ChangedFile, kind: str,
                       target: str = "") -> bool | None:
    """True when most same-type sibling files fetch the same way (or load the same Hub
    repository id); None when unknown."""
    if view is None:
        return None
    folder = str(PurePosixPath(changed.path).parent)
    names = view.list_dir("" if folder == "." else folder)
    if names is None:
        return None
    suffix = PurePosixPath(changed.path).suffix
    siblings = [n for n in names if n != changed.path and PurePosixPath(n).suffix == suffix]
    texts = [t for t in (view.read(n) for n in siblings[:MAX_SIBLINGS]) if t is not None]
    if len(texts) < 2:
        return None
    repo_id = hub_id(target)
    using = sum(kind in t or (repo_id is not None and _names(t, repo_id)) for t in texts)
    return using >= 2 and using * 2 >= len(texts)


def nearby_texts(snapshot: PullRequestSnapshot, changed: ChangedFile) -> Nearby:
    """The neighbourhood `nearby_convention` judges (same suffix), walked once per file."""
    suffix = PurePosixPath(changed.path).suffix
    return nearby_files(snapshot, changed.path, (suffix,)) if suffix else None


def nearby_convention(files: Nearby, changed: ChangedFile, kind: str) -> bool | None:
    """When the file's own folder does not tell (a new folder, or siblings that are the
    PR's new files): True when the neighbourhood (`nearby_files`: the ancestors' files
    and cousin folders) fetches the same way. That is: the shared fixtures of an
    ancestor folder (`conftest.py`, which every test below uses) do, or more than half
    the files read in one nearby folder do (at least two). A Hub id fetched somewhere
    nearby is not enough: a new job downloading a model the e2e scripts elsewhere also
    download still adds a download to a job with no cache. None when unknown."""
    if files is None:
        return None
    folder = PurePosixPath(changed.path).parent
    by_folder: dict[PurePosixPath, list[bool]] = {}
    for path, text in files:
        uses = kind in text
        where = PurePosixPath(path).parent
        if uses and where in folder.parents and PurePosixPath(path).name == "conftest.py":
            return True
        by_folder.setdefault(where, []).append(uses)
    return any(sum(uses) >= 2 and 2 * sum(uses) > len(uses) for uses in by_folder.values())
