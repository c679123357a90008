"""parallel-state-patch over a real git checkout: the advice follows what the repository defines."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.core.config import Config
from bot.core.engine import review
from bot.sources.git import snapshot_from_git
from rules.parallel_state_patch import ParallelStatePatch

TEST = "tests/unit/test_moe_gate.py"
PATCHED = (
    "from acme.distributed import parallel_state\n\n\n"
    "def test_gate():\n"
    "    parallel_state._MOE_EP = SimpleNamespace(world_size=1)\n"
    "    assert gate() is None\n"
)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def _messages(repo: Path, base: dict[str, str]) -> list[str]:
    _git(repo, "init", "-q", "-b", "main")
    for path, text in {**base, TEST: "def test_gate():\n    assert gate() is None\n"}.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    (repo / TEST).write_text(PATCHED)
    _git(repo, "commit", "-qam", "head")
    snapshot = snapshot_from_git("HEAD~1..HEAD", repo)
    report = review(snapshot, Config(), [ParallelStatePatch()])
    return [f.message for f in report.findings if f.rule == ParallelStatePatch.id]


def test_names_get_parallel_where_the_repository_defines_it(tmp_path: Path) -> None:
    defines = {"acme/distributed/parallel_state.py": "def get_parallel():\n    return _P\n"}
    (message,) = _messages(tmp_path, defines)
    assert "get_parallel().override(moe_ep_size=1)" in message


def test_names_no_api_the_repository_lacks(tmp_path: Path) -> None:
    lacks = {"acme/distributed/parallel_state.py": "_MOE_EP = None\n\n\ndef get_ep_group():\n"
                                                   "    return _MOE_EP\n"}
    (message,) = _messages(tmp_path, lacks)
    assert "get_parallel" not in message
    assert "the repository's public override or a shared fixture" in message
