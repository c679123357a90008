"""`nearby_files`: the bounded walk over a file's ancestors and cousin folders."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.repo_view import MappedRepoView
from bot.core.snapshot import PullRequestSnapshot
from rules.analysis import siblings
from rules.analysis.siblings import nearby_files

NEW = "tests/e2e/weekly/multi/ext/config/new.yaml"


def _snapshot(view: object) -> PullRequestSnapshot:
    return PullRequestSnapshot(files=(), repo_view=view)  # type: ignore[arg-type]


def _paths(files: list[tuple[str, str]] | None) -> list[str]:
    return [path for path, _ in files or []]


def test_files_are_read_by_fewest_differing_path_components() -> None:
    view = MappedRepoView({
        "tests/e2e/common.yaml": "a",
        "tests/e2e/weekly/multi/int/config/a.yaml": "b",  # one component differs
        "tests/e2e/nightly/multi/int/config/b.yaml": "c",  # two differ
        "tests/e2e/nightly/single/models/configs/c.yaml": "d",  # four: never read
        "tests/e2e/multi/ext/config/d.yaml": "f",  # one left out
        "tests/e2e/weekly/multi/ext/config/own.yaml": "e",  # the file's own folder
        "tests/e2e/weekly/multi/int/config/__init__.py": "",
    })
    got = _paths(nearby_files(_snapshot(view), NEW, (".yaml",)))
    assert got == ["tests/e2e/weekly/multi/int/config/a.yaml",
                   "tests/e2e/multi/ext/config/d.yaml",
                   "tests/e2e/nightly/multi/int/config/b.yaml",
                   "tests/e2e/common.yaml"]  # an ancestor four components up


def test_a_top_level_folder_has_no_neighbourhood() -> None:
    view = MappedRepoView({"tests/a.py": "x", "other/b.py": "y"})
    assert nearby_files(_snapshot(view), "tests/new.py", (".py",)) is None
    assert nearby_files(_snapshot(None), NEW, (".yaml",)) is None


def test_reads_are_spread_and_capped() -> None:
    files = {f"tests/e2e/big/t{i:02}.py": "x" for i in range(30)}
    files |= {f"tests/e2e/t{i:02}.py": "y" for i in range(30)}
    files["tests/e2e/conftest.py"] = "fixtures"
    got = _paths(nearby_files(_snapshot(MappedRepoView(files)), "tests/e2e/big/new/t.py",
                              (".py",)))
    assert len(got) == 2 * siblings.MAX_NEAR_PER_FOLDER
    assert got[0] == "tests/e2e/big/t00.py"
    assert "tests/e2e/conftest.py" in got  # shared fixtures first within their folder


@dataclass
class _CountingView:
    """A view that answers None until `fill` (the App before its query), counting asks."""

    files: dict[str, str]
    filled: bool = False
    asked: list[str] = field(default_factory=list)

    def read(self, path: str) -> str | None:
        return self.files.get(path) if self.filled else None

    def list_dir(self, path: str) -> tuple[str, ...] | None:
        self.asked.append(path)
        if not self.filled:
            return None
        # Files only, as the App's listing of a tree's blobs.
        return tuple(sorted(p for p in self.files if p.rsplit("/", 1)[0] == path))

    def find_symbol(self, name: str) -> tuple[str, ...] | None:
        return None


def test_a_view_that_does_not_know_yet_is_asked_for_every_ancestor_at_once() -> None:
    view = _CountingView({"tests/e2e/conftest.yaml": "a",
                          "tests/e2e/nightly/multi/int/config/b.yaml": "b"})
    assert nearby_files(_snapshot(view), NEW, (".yaml",)) is None
    assert view.asked == ["tests/e2e/weekly/multi/ext", "tests/e2e/weekly/multi",
                          "tests/e2e/weekly", "tests/e2e", "tests"]
    view.filled, view.asked = True, []
    # Listing files only, the walk sees the ancestors' files and finds no cousins.
    assert _paths(nearby_files(_snapshot(view), NEW, (".yaml",))) == ["tests/e2e/conftest.yaml"]


def test_listings_are_capped() -> None:
    files = {f"tests/e2e/d{i:02}/x/y/z/f.yaml": "v" for i in range(60)}
    view = _CountingView(files, filled=True)
    original = view.list_dir

    def listing(path: str) -> tuple[str, ...] | None:
        original(path)
        prefix = f"{path}/"
        return tuple(sorted({prefix + p[len(prefix):].split("/", 1)[0]
                             for p in files if p.startswith(prefix)}))

    view.list_dir = listing  # type: ignore[method-assign]
    nearby_files(_snapshot(view), "tests/e2e/new/x/y/z/f.yaml", (".yaml",))
    assert len(view.asked) == siblings.MAX_NEAR_LISTINGS


def test_namesakes_are_found_beyond_the_per_folder_sample() -> None:
    # Thirty files one folder up: the sample of four would miss `test_model.py`.
    files = {f"tests/e2e/four/test_{i:02}.py": "x" for i in range(30)}
    files["tests/e2e/four/test_model.py"] = "up"
    files["tests/e2e/two/v2/test_model.py"] = "cousin"
    files["tests/e2e/four/v2/test_other.py"] = "sibling"  # the own folder: not a namesake
    view = MappedRepoView(files)
    got = siblings.namesake_files(_snapshot(view), "tests/e2e/four/v2/test_model.py")
    assert _paths(got) == ["tests/e2e/four/test_model.py", "tests/e2e/two/v2/test_model.py"]
    assert siblings.namesake_files(_snapshot(view), "tests/e2e/four/v2/test_none.py") is None
