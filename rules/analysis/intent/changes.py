"""What a PR's diff says about its CI-fix intent, where the title cannot tell.

Two kinds of change read as fixes by their titles and are not fixes of a failing
test or build job: repository automation (PR bots, slash-command workflows, label and
stale managers, their config) — "[CI] Fix gh install error" on the cherry-pick command
workflow — and un-skipping ("fix skipped e2e test" that only deletes
`@pytest.mark.skip`): turning a test back on restores coverage, and no run failed.
The opposite, a diff that only skips tests (skip markers, a step's `if:`, test lines
commented out), answers a failure in CI whatever its title says. And a diff of CI and
test files only puts a timeout the title fixes ("takes too long") in CI. Everything is
linear in the diff.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from pathlib import PurePosixPath

from bot.core.snapshot import ChangedFile

# Words of an automation workflow's or script's file name ("bot_pr_create.yaml",
# "pr_cherry_pick_command.yml", "schedule_stale_manage.yaml"). Not "labeled": a
# "labeled_doctest" workflow runs tests when a label is set.
_AUTOMATION_WORDS = frozenset({
    "bot", "bots", "command", "commands", "slash", "stale", "label", "labels", "labeler",
    "cherrypick", "backport", "triage", "assign", "assigner", "welcome", "greet",
    "greetings", "automerge", "mergify", "dco", "reminder", "issue", "issues",
})
_AUTOMATION_PAIRS = frozenset({("cherry", "pick"), ("auto", "merge"), ("pr", "title")})
# Config of GitHub's own automation: who reviews, which labels, which templates.
_AUTOMATION_CONFIG_RE = re.compile(
    r"^(?:\.github/)?(?:CODEOWNERS|dependabot\.ya?ml|labeler\.ya?ml|labels\.ya?ml|"
    r"mergify\.ya?ml|\.mergify\.ya?ml|stale\.ya?ml|release-drafter\.ya?ml|"
    r"ISSUE_TEMPLATE/.*|PULL_REQUEST_TEMPLATE(?:\.md|/.*)|pull_request_template\.md)$"
)


def _automation_path(path: str) -> bool:
    if _AUTOMATION_CONFIG_RE.match(path):
        return True
    if not path.startswith(".github/"):
        return False  # a test script named "test_label_parser.py" is not a bot
    tokens = [t for t in re.split(r"[^a-z0-9]+", PurePosixPath(path).stem.lower()) if t]
    return any(t in _AUTOMATION_WORDS for t in tokens) or any(
        pair in _AUTOMATION_PAIRS for pair in pairwise(tokens))


def automation_only(files: Sequence[ChangedFile]) -> bool:
    """Every changed file is repository automation (a bot, a slash command, a label or
    stale manager, GitHub's review and template config)."""
    return bool(files) and all(
        _automation_path(f.path) and (f.previous_path is None or _automation_path(f.previous_path))
        for f in files)


# A skip marker and only that: a decorator or a call that skips or xfails the test.
_SKIP_START_RE = re.compile(
    r"^\s*(?:@\s*(?:pytest\.mark\.(?:skip|skipif|xfail)|unittest\.(?:skip|skipIf|skipUnless|"
    r"expectedFailure)|(?:skip|skipif|xfail|skip_if\w*|skip_unless\w*)\b)|"
    r"pytest\.(?:skip|xfail)\s*\()"
)


def _depth(text: str) -> int:
    code = text.split("#", 1)[0]
    return code.count("(") + code.count("[") - code.count(")") - code.count("]")


def _only_skip_markers(lines: Sequence[str]) -> bool:
    """The lines are whole skip markers (a multi-line `skipif(…)` with its continuation)."""
    depth, seen = 0, False
    for text in lines:
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        if depth <= 0:
            if not _SKIP_START_RE.match(text):
                return False
            depth, seen = _depth(text), True
        else:
            depth += _depth(text)
    return seen and depth <= 0


def only_unskips(files: Sequence[ChangedFile]) -> bool:
    """The diff deletes skip/xfail markers and changes nothing else."""
    if not files:
        return False
    for changed in files:
        if changed.status not in ("modified", "changed") or changed.patch_missing:
            return False
        if any(line.text.strip() for line in changed.added_lines):
            return False
        if not _only_skip_markers([line.text for line in changed.removed_lines]):
            return False
    return True


_YAML_IF_RE = re.compile(r"^\s*(?:-\s+)?if:\s*\S")
_COMMENT_RE = re.compile(r"^\s*#+\s?(.*)$")


def _skip_only_file(changed: ChangedFile) -> bool | None:
    """True when the file's changes only skip (adds markers or `if:` conditions, or
    comments out lines), False when they do anything else, None when they only add
    comments. A condition or a commented-out line skips a test only in a CI or test
    file (a surface): in product code it turns off a feature."""
    ci = changed.surface is not None
    yaml = ci and changed.path.endswith((".yml", ".yaml"))
    commented: set[str] = set()
    markers: list[str] = []
    for line in changed.added_lines:
        text = line.text
        comment = _COMMENT_RE.match(text)
        if comment:
            commented.add(comment.group(1).strip().lstrip("#").strip())
        elif yaml and _YAML_IF_RE.match(text):
            markers.append("")
        elif text.strip():
            markers.append(text)
    removed = [line.text.strip() for line in changed.removed_lines if line.text.strip()]
    if (removed and not ci) or any(text not in commented for text in removed):
        return False  # a line changed or deleted, not commented out
    code = [m for m in markers if m]
    if code and not _only_skip_markers(code):
        return False
    return True if markers or removed else None


def only_adds_skips(files: Sequence[ChangedFile]) -> bool:
    """The diff only skips or xfails tests, or comments them out, and changes nothing else."""
    skips = False
    for changed in files:
        if changed.status not in ("modified", "changed") or changed.patch_missing:
            return False
        verdict = _skip_only_file(changed)
        if verdict is False:
            return False  # one file that does anything else decides: no need to read on
        skips = skips or verdict is True
    return skips


def ci_files_only(files: Sequence[ChangedFile]) -> bool:
    """Every changed file is a CI surface (a workflow, a CI script or config, a test)."""
    return bool(files) and all(f.surface is not None for f in files)
