"""The App's `RepoView`: the repository at the PR's base revision, over GraphQL, budgeted.

Rules are pure and synchronous, so the view cannot call GitHub while a rule asks. It
answers from what it holds and notes what it was asked and did not know; the review
then fetches all of that in one GraphQL query and runs the engine again
(`with_repo_context`). The directories of the changed in-scope files are listed in the
query that fetches the PR's file texts, so the common question ("what do the sibling
files do?") costs one query for the siblings' texts. At most `MAX_VIEW_CALLS` queries
per review: past that every unknown answer stays None ("don't know"), never an error.
`find_symbol` cannot search a repository over the API within that budget: it answers
from the texts it holds, and None when they do not define the name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from bot.core.repo_view import MAX_SYMBOL_HITS, defines
from bot.github.calls import Flow
from bot.github.graphql import MAX_OBJECTS, GitObject, expression, fetch_objects
from bot.sources.files import MAX_TEXT_BYTES

T = TypeVar("T")
MAX_VIEW_CALLS = 2  # GraphQL queries per review for repository context
MAX_PREFETCH_DIRS = 20  # directories listed along with the PR's file texts


class ApiRepoView:
    def __init__(self, owner: str, repo: str, rev: str, *, cap: int = MAX_TEXT_BYTES,
                 max_calls: int = MAX_VIEW_CALLS) -> None:
        self._owner, self._repo, self.rev = owner, repo, rev
        self._cap = cap
        self.calls_left = max_calls
        self.calls = 0
        self._texts: dict[str, str | None] = {}
        self._dirs: dict[str, tuple[str, ...] | None] = {}
        self._wanted_texts: set[str] = set()
        self._wanted_dirs: set[str] = set()

    def __repr__(self) -> str:
        return f"ApiRepoView({self._owner}/{self._repo}@{self.rev[:7]})"

    # -- RepoView ---------------------------------------------------------------------
    def read(self, path: str) -> str | None:
        key = path.strip("/")
        if key in self._texts:
            return self._texts[key]
        if self.calls_left > 0:
            self._wanted_texts.add(key)
        return None

    def list_dir(self, path: str) -> tuple[str, ...] | None:
        key = path.strip("/")
        if key in self._dirs:
            return self._dirs[key]
        if self.calls_left > 0:
            self._wanted_dirs.add(key)
        return None

    def find_symbol(self, name: str) -> tuple[str, ...] | None:
        hits = tuple(sorted(p for p, text in self._texts.items()
                            if text is not None and defines(text, name)))
        return hits[:MAX_SYMBOL_HITS] if hits else None

    # -- filling ----------------------------------------------------------------------
    @property
    def wants(self) -> bool:
        return self.calls_left > 0 and bool(self._wanted_texts or self._wanted_dirs)

    def dir_expression(self, path: str) -> str:
        return expression(self.rev, path)

    def learn_dir(self, path: str, obj: GitObject) -> None:
        key = path.strip("/")
        if obj.kind == "tree":
            prefix = f"{key}/" if key else ""
            self._dirs[key] = tuple(sorted(f"{prefix}{name}" for name, kind in obj.entries
                                           if kind == "blob"))
        elif obj.kind == "missing":
            self._dirs[key] = ()  # not there at the base: a new directory
        else:
            self._dirs[key] = None

    def learn_text(self, path: str, obj: GitObject) -> None:
        fits = obj.byte_size is None or obj.byte_size <= self._cap
        self._texts[path.strip("/")] = obj.text if obj.complete_text and fits else None

    def fill(self) -> Flow[None]:
        """One query for what the rules asked and the view did not know."""
        if not self.wants:
            return
        dirs = sorted(self._wanted_dirs)[:MAX_OBJECTS]
        texts = sorted(self._wanted_texts)[: MAX_OBJECTS - len(dirs)]
        self._wanted_dirs.clear()
        self._wanted_texts.clear()
        self.calls_left -= 1
        self.calls += 1
        found = yield from fetch_objects(
            self._owner, self._repo,
            [*(expression(self.rev, d) for d in dirs), *(expression(self.rev, t) for t in texts)],
        )
        for path in dirs:
            self.learn_dir(path, found[expression(self.rev, path)])
        for path in texts:
            self.learn_text(path, found[expression(self.rev, path)])


def with_repo_context(view: object, evaluate: Callable[[], T]) -> Flow[T]:
    """`evaluate()`, run again after each fill while the App's view was asked what it lacked."""
    result = evaluate()
    while isinstance(view, ApiRepoView) and view.wants:
        yield from view.fill()
        result = evaluate()
    return result
