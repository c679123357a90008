"""Repository context: the PR-JSON map and the git checkout answer the same questions."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.core.repo_view import MappedRepoView, RepoView
from bot.sources import SourceError
from bot.sources.git import snapshot_from_git
from bot.sources.prjson import snapshot_from_pr_data

FILES = {
    "tests/evals/a.yaml": "model_name: a\nenv:\n  PYTORCH_CUDA_ALLOC_CONF: x\n",
    "tests/evals/b.yaml": "model_name: b\n",
    "tests/utils.py": "class ParallelOverride:\n    def override(self, **kw):\n        pass\n",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q", "-b", "main")
    for path, text in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    (tmp_path / "tests/evals/c.yaml").write_text("model_name: c\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "head")
    return tmp_path


def _answers(view: RepoView) -> tuple[object, ...]:
    return (view.read("tests/evals/a.yaml"), view.read("missing.yaml"),
            view.list_dir("tests/evals"), view.find_symbol("override"),
            view.find_symbol("ParallelOverride"))


def test_git_and_mapped_views_agree(checkout: Path) -> None:
    snapshot = snapshot_from_git("HEAD~1..HEAD", checkout)
    assert snapshot.repo_view is not None
    mapped = MappedRepoView(FILES, complete=True)
    assert _answers(snapshot.repo_view) == _answers(mapped)
    # The view is the base revision: the PR's new file is not in it.
    assert "tests/evals/c.yaml" not in (snapshot.repo_view.list_dir("tests/evals") or ())


def test_an_incomplete_map_says_it_does_not_know() -> None:
    view = MappedRepoView({"tests/evals/a.yaml": "x: 1\n"})
    assert view.find_symbol("override") is None
    assert view.list_dir("elsewhere") is None


def test_pr_json_repo_files_become_the_view_and_bad_ones_are_errors() -> None:
    snap = snapshot_from_pr_data({"files": [], "repo_files": FILES})
    assert snap.repo_view is not None
    assert snap.repo_view.read("tests/evals/b.yaml") == "model_name: b\n"
    assert snapshot_from_pr_data({"files": []}).repo_view is None
    with pytest.raises(SourceError, match="repo_files"):
        snapshot_from_pr_data({"files": [], "repo_files": {"a": 1}})
