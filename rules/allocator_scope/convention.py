"""Is an allocator setting the repository's convention rather than this PR's decision?

It is when it only moved (the same variable and value are removed elsewhere in the PR,
e.g. with the tests that needed it), or when sibling files at the base revision already
set the identical value (a new workflow or config copying the others). Sibling files
come from the snapshot's `repo_view`; without one the answer is "don't know" (None).

For a setting scoped to one config, "the others" need not be most of the directory:
per-model config folders hold a vendor's deployment recipe in a third of the files
(10 of 22 nightly configs set the same value), and a variant config
(`Model-A3.yaml` beside `Model.yaml`) copies its base config's environment.

A new test module beside folders of configs (`nightly/test_x.py` over
`nightly/single_node/models/configs/*.yaml`) has no siblings of its kind; then a bounded
sample of the files below its folder stands in for them (`subtree_files`).

A new folder (`weekly/multi_node/external_dp/config/` holding only this PR's config)
has no siblings at all; then its neighbourhood does (`nearby_files`: the ancestors'
files and the cousin folders `weekly/multi_node/internal_dp/config`,
`nightly/multi_node/external_dp/config`), judged like the subtree sample.

Two kinds of evidence hold for a scoped setting (one step, test or config) only, since
copying a value into a broader scope is a new decision however often it is set below:
the file's own base revision already sets the identical value elsewhere (a new step of
`_e2e_test.yaml` copying the env every other step of that workflow sets), and a file of
the same name nearby does (`four_card/model_runner_v2/test_deepseek_v4.py` copying the
env of `four_card/test_deepseek_v4.py`, the same model's test one folder up). A setting
neither the file nor its namesake holds is still this PR's, and still flagged.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from bot.core.snapshot import PullRequestSnapshot
from rules.analysis.siblings import namesake_files, nearby_files, sibling_files, subtree_files

_RECIPE_MIN = 3  # siblings sharing a value before a third of the folder is a recipe
_STEM_MIN = 4  # a shorter common stem ("a.yaml", "ab-x.yaml") says nothing of kinship
_QUOTED_KEY = r"[\"'\]]{0,3}"  # `VAR:`, `"VAR":`, `os.environ["VAR"] =`


def _pattern(var: str, value: str) -> re.Pattern[str]:
    return re.compile(
        rf"{re.escape(var)}{_QUOTED_KEY}\s*[:=,]\s*[\"']?{re.escape(value)}(?![\w.])")


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
    """Whether the siblings set the identical value (`_siblings`) or, when they do not
    tell, most of the files below the folder that set `var` do (at least three): a new
    test module beside the `configs/` subfolders whose recipes all carry it; or, for a
    file with no siblings, most of the nearby files setting `var` do."""
    if not broad and (_own_file(snapshot, path, var, value)
                      or _any_sets(namesake_files(snapshot, path), var, value)):
        return True  # the file's own convention, or that of its namesake nearby
    shared = _siblings(snapshot, path, var, value, broad)
    if shared:
        return True
    if _most_setters(subtree_files(snapshot, path), var, value):
        return True
    if shared is None and _most_setters(nearby_files(snapshot, path, _kin(path)), var, value):
        return True  # a new folder copying the recipe of its cousins (`nearby_files`)
    return shared


def _own_file(snapshot: PullRequestSnapshot, path: str, var: str, value: str) -> bool:
    """The file's base revision already sets the identical value (another step or test)."""
    changed = next((c for c in snapshot.files if c.path == path), None)
    text = changed.base_text if changed is not None else None
    if text is None and changed is not None and changed.status != "added" \
            and snapshot.repo_view is not None:
        text = snapshot.repo_view.read(path)  # a partial snapshot: the base from the view
    if text is None and changed is not None:
        text = "\n".join(changed.patch_base_lines.values())  # the patch's base lines alone
    if not text:
        return False
    # A commented-out setting is one the file turned off, not its convention.
    live = "\n".join(line for line in text.splitlines()
                      if not line.lstrip().startswith(("#", "//")))
    return _any_sets([(path, live)], var, value)


def _any_sets(files: list[tuple[str, str]] | None, var: str, value: str) -> bool:
    pattern = _pattern(var, value)
    return any(pattern.search(text) for _, text in files or ())


def _most_setters(files: list[tuple[str, str]] | None, var: str, value: str) -> bool:
    """At least three of `files` set `var` to `value`, and most of those setting it do."""
    if not files:
        return False
    setting = re.compile(rf"{re.escape(var)}{_QUOTED_KEY}\s*[:=,]")
    pattern = _pattern(var, value)
    setters = [text for _, text in files if setting.search(text)]
    same = sum(1 for text in setters if pattern.search(text))
    return same >= _RECIPE_MIN and 2 * same > len(setters)


def _kin(path: str) -> tuple[str, ...]:
    """Suffixes of files of the same kind: a YAML config's cousins may say `.yml`."""
    suffix = PurePosixPath(path).suffix
    return (".yaml", ".yml") if suffix in (".yaml", ".yml") else (suffix,)


def _siblings(snapshot: PullRequestSnapshot, path: str, var: str, value: str,
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
