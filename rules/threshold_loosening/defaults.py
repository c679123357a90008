"""What the repository's code says about a config key: its default, and whether its
values only warn.

A gate key added to an existing config replaces the default the code applied before
(`recovery_threshold: float = 0.95`), and a dropped key falls back to it: whether that
loosens depends on the default, so it is read from the code at the base revision —
the PR's own Python files, else the Python files of the config's directory and the two
above it in the RepoView (bounded; no view, no answer). A key the code documents as
warnings-only (`metrics: … used for warnings only, not failures`) gates nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from bot.core.repo_view import RepoView, parent
from bot.core.snapshot import PullRequestSnapshot
from rules.analysis.lines import sides

_MAX_VIEW_FILES = 16  # Python files read from the RepoView per review
_MAX_TEXT = 256 * 1024
_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_WARN_ONLY_RE = re.compile(
    r"warn\w*[^\n]{0,40}?(?:\bonly\b|\bnot\s+(?:as\s+)?(?:a\s+)?fail)|\bonly\s+warn"
    r"|\b(?:never|not|n't)\s+fail\w*[^\n]{0,40}?warn", re.I)


@lru_cache(maxsize=256)
def _key_patterns(key: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(default, mention) patterns of a key written with `_` or `-`."""
    spelled = "[-_]".join(re.escape(part) for part in re.split(r"[-_]", key))
    default = re.compile(
        rf"(?<![\w-]){spelled}\s*(?::[^=\n]{{0,60}})?=\s*({_NUM})\s*(?:[,)#]|$)"
        rf"|[\"']{spelled}[\"']\s*,\s*({_NUM})\s*\)", re.M)
    return default, re.compile(rf"(?<![\w-]){spelled}(?![\w-])")


class CodeKnowledge:
    """Python texts of the base revision, gathered on first use (most reviews need none)."""

    def __init__(self, snapshot: PullRequestSnapshot) -> None:
        self._snapshot = snapshot
        self._texts: dict[str, str] | None = None
        self._dirs: set[str] = set()
        self._budget = _MAX_VIEW_FILES

    def _own(self) -> dict[str, str]:
        if self._texts is None:
            self._texts = {}
            for changed in self._snapshot.files:
                if not changed.path.endswith(".py") or changed.status == "added":
                    continue
                text = changed.base_text
                if text is None:  # patch only: the base side the hunks show
                    text = "\n".join(t for h in changed.hunks for _, t, _ in sides(h)[0])
                self._texts[changed.path] = text[:_MAX_TEXT]
        return self._texts

    def _around(self, path: str) -> None:
        """Add the view's Python files near `path` (its directory and two above)."""
        view: RepoView | None = self._snapshot.repo_view
        texts = self._own()
        folder = parent(path)
        for _ in range(3):
            if view is None or self._budget <= 0:
                return
            if folder not in self._dirs:
                self._dirs.add(folder)
                for name in view.list_dir(folder) or ():
                    if not name.endswith(".py") or name in texts or self._budget <= 0:
                        continue
                    self._budget -= 1
                    text = view.read(name)
                    if text is not None:
                        texts[name] = text[:_MAX_TEXT]
            if not folder:
                return
            folder = parent(folder)

    def _texts_for(self, path: str) -> Iterator[str]:
        self._around(path)
        yield from self._own().values()

    def default(self, path: str, key: str) -> str | None:
        """The one numeric default the code gives `key`, as written; None when none or
        several differ."""
        pattern, _ = _key_patterns(key)
        found = {a or b for text in self._texts_for(path)
                 if key.replace("-", "_")[:4] in text.replace("-", "_")
                 for a, b in pattern.findall(text)}
        return found.pop() if len({float(v) for v in found}) == 1 else None

    def warnings_only(self, path: str, key: str) -> bool:
        """Whether the code says `key`'s values only warn (on its line or the one above)."""
        _, mention = _key_patterns(key)
        for text in self._texts_for(path):
            if "warn" not in text.lower():
                continue
            lines = text.splitlines()
            for i, line in enumerate(lines):
                if mention.search(line) and any(
                        _WARN_ONLY_RE.search(lines[j]) for j in range(max(0, i - 1), i + 1)):
                    return True
        return False
