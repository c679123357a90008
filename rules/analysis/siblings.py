"""Sibling files at the base revision: what the rest of a directory already does.

A setting or idiom that most sibling files share is the repository's convention, not a
decision of this PR. Siblings come from the PR's own changed files (their base text)
and from the snapshot's `repo_view`; without either the answer is None ("don't know").
"""

from __future__ import annotations

from pathlib import PurePosixPath

from bot.core.snapshot import PullRequestSnapshot

MAX_SIBLINGS = 32


def sibling_texts(snapshot: PullRequestSnapshot, path: str) -> list[str] | None:
    """Base-revision texts of the files next to `path` with its extension (bounded)."""
    files = sibling_files(snapshot, path)
    return None if files is None else [text for _, text in files]


def sibling_files(snapshot: PullRequestSnapshot,
                  path: str) -> list[tuple[str, str]] | None:
    """(path, base-revision text) of the files next to `path` with its extension."""
    folder = PurePosixPath(path).parent
    suffix = PurePosixPath(path).suffix
    texts: list[tuple[str, str]] = []
    # Siblings this PR also changes are read from the snapshot: a view bounded to a
    # few files per directory may not hold them.
    in_pr: set[str] = set()
    for changed in snapshot.files:
        other = PurePosixPath(changed.path)
        if changed.path == path or other.parent != folder or other.suffix != suffix:
            continue
        in_pr.add(changed.path)
        if changed.base_text is not None:
            texts.append((changed.path, changed.base_text))
    view = snapshot.repo_view
    listed = None
    if view is not None:
        listed = view.list_dir("" if str(folder) == "." else str(folder))
    if view is None or listed is None:
        return texts or None
    siblings = [p for p in listed if p != path and p not in in_pr
                and PurePosixPath(p).suffix == suffix]
    for sibling in siblings[:MAX_SIBLINGS]:
        text = view.read(sibling)
        if text is not None:
            texts.append((sibling, text))
    return texts or None


MAX_WALK_DIRS = 16  # listings below a folder: three levels of a typical tests/ tree
MAX_WALK_READS = 12
WALK_SUFFIXES = (".yaml", ".yml", ".py", ".sh", ".json")
_MARKERS = ("__init__.py", "conftest.py")  # package markers and fixtures set no run's env


def subtree_files(snapshot: PullRequestSnapshot, path: str) -> list[tuple[str, str]] | None:
    """(path, base text) of a bounded sample of files in the subfolders of `path`'s folder:
    a breadth-first walk of at most MAX_WALK_DIRS listings, then at most MAX_WALK_READS
    reads taken round-robin across the folders found, so one large folder of scripts
    does not stand for the whole tree. None without a view or when nothing is listed."""
    view = snapshot.repo_view
    if view is None:
        return None
    start = str(PurePosixPath(path).parent)
    queue = ["" if start == "." else start]
    found: list[list[str]] = []
    listings = 0
    while queue and listings < MAX_WALK_DIRS:
        folder = queue.pop(0)
        entries = view.list_dir(folder)
        listings += 1
        if entries is None:
            continue
        # Entries without a suffix are taken for subdirectories (a file read there fails).
        queue += [e for e in entries if not PurePosixPath(e).suffix]
        if listings > 1:  # the start folder's own files are the siblings, read already
            found.append([e for e in entries if PurePosixPath(e).suffix in WALK_SUFFIXES
                          and PurePosixPath(e).name not in _MARKERS])
    texts: list[tuple[str, str]] = []
    reads = 0
    while reads < MAX_WALK_READS and any(found):
        for files in found:
            if files and reads < MAX_WALK_READS:
                reads += 1
                below = files.pop(0)
                text = view.read(below)
                if text is not None:
                    texts.append((below, text))
    return texts or None


# The neighbourhood of a file whose own folder says nothing (a new folder, or siblings
# that are the PR's own new files): its ancestors' files and the "cousin" folders that
# sit where it sits in a parallel tree (`tests/e2e/310p/singlecard/pooling` beside
# `tests/e2e/singlecard/pooling`, `weekly/multi_node/external_dp/config` beside
# `nightly/multi_node/internal_dp/config`).
MAX_NEAR_LISTINGS = 24  # list_dir calls (API objects in the App), ancestors first
MAX_NEAR_READS = 16
MAX_NEAR_PER_FOLDER = 4  # so one big folder does not stand for the neighbourhood
MAX_NEAR_EDITS = 2  # path components a cousin may differ in (changed, added, left out)
_NOT_EVIDENCE = ("__init__.py",)  # package markers hold no convention
_FIXTURES = "conftest.py"


def _edit_row(row: list[int], name: str, parts: tuple[str, ...]) -> list[int]:
    """One more path component: row[j] is the edit distance (in components) from the
    folder to the first j components of the file's folder."""
    new = [row[0] + 1]
    for j, part in enumerate(parts, 1):
        new.append(min(row[j] + 1, new[j - 1] + 1, row[j - 1] + (name != part)))
    return new


def nearby_files(snapshot: PullRequestSnapshot, path: str,
                 suffixes: tuple[str, ...]) -> list[tuple[str, str]] | None:
    """(path, base text) of files with one of `suffixes` near `path`'s folder F: the files
    of F's ancestors (up to the top-level folder, not the root) and of the folders no
    deeper than F whose path is at most MAX_NEAR_EDITS components from F's (a component
    changed, added or left out). F itself is not read (`sibling_files` is).

    Folders are listed best first (fewest edits any folder below could reach, then the
    deeper the ancestor shared with F), files read nearest first (fewest edits from F),
    MAX_NEAR_PER_FOLDER a folder: deterministic and bounded by MAX_NEAR_LISTINGS listings
    and MAX_NEAR_READS reads. The ancestors are known from the path, so a view answering
    None while it fetches (the App) is asked for all of them at once; a view listing files
    only (no subfolders) yields the ancestors' files alone. None without view or text."""
    folders = _near_folders(snapshot, path, suffixes)
    return None if folders is None else _read_spread(snapshot, folders, path)


MAX_NAMESAKES = 4  # reads of files named like the new one, nearest first


def namesake_files(snapshot: PullRequestSnapshot, path: str) -> list[tuple[str, str]] | None:
    """(path, base text) of the files in `nearby_files`' folders that have `path`'s own
    name (`four_card/test_deepseek_v4.py` for `four_card/model_runner_v2/test_deepseek_v4.py`),
    nearest first, whether or not `nearby_files`' per-folder sample would pick them;
    at most MAX_NAMESAKES. None without view, folders or namesake."""
    name = PurePosixPath(path).name
    folders = _near_folders(snapshot, path, (PurePosixPath(path).suffix,))
    if folders is None:
        return None
    view = snapshot.repo_view
    assert view is not None
    changed = {c.path: c for c in snapshot.files}
    found = [f for files in folders for f in files
             if PurePosixPath(f).name == name and f != path][:MAX_NAMESAKES]
    texts: list[tuple[str, str]] = []
    for other in found:
        own = changed.get(other)
        text = view.read(other) if own is None else own.base_text
        if text is not None:
            texts.append((other, text))
    return texts or None


def _near_folders(snapshot: PullRequestSnapshot, path: str,
                  suffixes: tuple[str, ...]) -> list[list[str]] | None:
    """The files with `suffixes` of each folder `nearby_files` describes, best folder
    first. None without view or for a top-level file."""
    view = snapshot.repo_view
    parts = PurePosixPath(path).parent.parts
    if view is None or len(parts) < 2:
        return None
    rows = {"": list(range(len(parts) + 1))}
    for k in range(1, len(parts) + 1):
        rows["/".join(parts[:k])] = _edit_row(rows["/".join(parts[:k - 1])], parts[k - 1], parts)
    # (fewest edits reachable below, -depth of the ancestor shared with F, folder)
    queue = [(0, -k, "/".join(parts[:k])) for k in range(len(parts) - 1, 0, -1)]
    found: list[tuple[int, int, list[str]]] = []  # (edits from F, order listed, files)
    while queue and len(found) < MAX_NEAR_LISTINGS:
        queue.sort()
        _, anchor, folder = queue.pop(0)
        entries = view.list_dir(folder) or ()
        row = rows[folder]
        found.append((row[-1], len(found), [
            e for e in entries if PurePosixPath(e).suffix in suffixes
            and PurePosixPath(e).name not in _NOT_EVIDENCE]))
        if folder.count("/") + 1 >= len(parts):
            continue  # no deeper than F
        for entry in entries:
            if PurePosixPath(entry).suffix or entry in rows:
                continue  # a file, or F's own line of folders (queued already)
            rows[entry] = _edit_row(row, PurePosixPath(entry).name, parts)
            if min(rows[entry]) <= MAX_NEAR_EDITS:
                queue.append((min(rows[entry]), anchor, entry))
    return [files for *_, files in sorted(found)]


def _sample(files: list[str]) -> list[str]:
    """MAX_NEAR_PER_FOLDER of a folder's files: its shared fixtures (`conftest.py`, which
    every test below uses) first, then files spread evenly over the sorted listing, so
    a run of similarly named scripts (`run_x_megatron*.sh`) does not stand for the rest."""
    fixtures = [f for f in files if PurePosixPath(f).name == _FIXTURES]
    rest = [f for f in files if f not in fixtures]
    room = MAX_NEAR_PER_FOLDER - len(fixtures)
    if len(rest) > room:
        rest = [rest[i * len(rest) // room] for i in range(room)]
    return (fixtures + rest)[:MAX_NEAR_PER_FOLDER]


def _read_spread(snapshot: PullRequestSnapshot, folders: list[list[str]],
                 path: str) -> list[tuple[str, str]] | None:
    """Up to MAX_NEAR_PER_FOLDER files of each folder in order, MAX_NEAR_READS in all.
    A file this PR changes is read from the snapshot (its base text; none when added)."""
    view = snapshot.repo_view
    assert view is not None
    changed = {c.path: c for c in snapshot.files}
    texts: list[tuple[str, str]] = []
    reads = 0
    for files in folders:
        for name in _sample(files):
            if reads >= MAX_NEAR_READS:
                return texts or None
            if name == path:
                continue
            reads += 1
            own = changed.get(name)
            text = view.read(name) if own is None else own.base_text
            if text is not None:
                texts.append((name, text))
    return texts or None
