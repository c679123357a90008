"""Is an allocator setting the repository's convention rather than this PR's decision?

It is when it only moved (the same variable and value are removed elsewhere in the PR,
e.g. with the tests that needed it), or when sibling files at the base revision already
set the identical value (a new workflow or config copying the others). Sibling files
come from the snapshot's `repo_view`; without one the answer is "don't know" (None).

For a setting scoped to one config, "the others" need not be most of the directory:
per-model config folders hold a vendor's deployment recipe in a third of the files
(10 of 22 nightly configs set the same value), and a variant config
(`Model-A3.yaml` beside `Model.yaml`) copies its base config's environment.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from bot.core.snapshot import PullRequestSnapshot
from rules.analysis.siblings import sibling_files

_RECIPE_MIN = 3  # siblings sharing a value before a third of the folder is a recipe
_STEM_MIN = 4  # a shorter common stem ("a.yaml", "ab-x.yaml") says nothing of kinship


def _pattern(var: str, value: str) -> re.Pattern[str]:
    quoted_key = r"[\"'\]]{0,3}"  # `VAR:`, `"VAR":`, `os.environ["VAR"] =`
    return re.compile(
        rf"{re.escape(var)}{quoted_key}\s*[:=,]\s*[\"']?{re.escape(value)}(?![\w.])")


def moved(snapshot: PullRequestSnapshot, path: str, var: str, value: str) -> bool:
    """The same setting is removed by this PR from another file (it moved here)."""
    pattern = _pattern(var, value)
    return any(
        pattern.search(line.text)
        for changed in snapshot.files if changed.path != path
        for line in changed.removed_lines if var in line.text
    )


def convention(snapshot: PullRequestSnapshot, path: str, var: str, value: str,
               broad: bool) -> bool | None:
    """Whether siblings at the base revision already set the identical value: any of them
    for a broad scope (a workflow copying another's env); for a scoped setting, most of
    them, a recipe shared by a third (and at least three), or the base of a variant
    config. None without context."""
    files = sibling_files(snapshot, path)
    if files is None:
        return None
    pattern = _pattern(var, value)
    sharing = [sibling for sibling, text in files if pattern.search(text)]
    if not sharing:
        return False
    if broad or 2 * len(sharing) >= len(files):
        return True
    if len(sharing) >= _RECIPE_MIN and 3 * len(sharing) >= len(files):
        return True
    return any(_variants(path, sibling) for sibling in sharing)


def _variants(one: str, other: str) -> bool:
    """`Model-A3.yaml` and `Model.yaml`: one stem is the other's plus a suffix."""
    a, b = PurePosixPath(one).stem, PurePosixPath(other).stem
    short, long = sorted((a, b), key=len)
    return (len(short) >= _STEM_MIN and len(long) > len(short)
            and long.startswith(short) and long[len(short)] in "-_.")
