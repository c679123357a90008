"""Installs people expect, tested offline: a clean wheel and sdist, the wheel's console
script in a fresh virtualenv (what pipx and `uv tool` make), one version, and the
pre-commit hook run by the real `pre-commit try-repo`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

import bot

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DEV_SITE = sysconfig.get_paths()["purelib"]
WORKFLOW = "jobs:\n  test:\n    runs-on: ubuntu\n"
SILENCED = "jobs:\n  test:\n    continue-on-error: true\n    runs-on: ubuntu\n"


def offline_env(**extra: str) -> dict[str, str]:
    """No index at all: whatever is installed must come from here, never the network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else distutils warns about byte-compiling
    return {**env, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                           str(out), str(ROOT)], capture_output=True, text=True,
                          env=offline_env(), check=False, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    log = (done.stdout + done.stderr).lower()
    assert "warning" not in log, [line for line in log.splitlines() if "warning" in line]
    return out


def test_wheel_and_sdist_carry_one_version_and_what_they_need(dist: Path) -> None:
    wheel = next(dist.glob("*.whl"))
    sdist = next(dist.glob("*.tar.gz"))
    assert wheel.name == f"ci_stability_bot-{bot.__version__}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert "bot/evidence/patterns.json" in names and "rules/__init__.py" in names
    assert not any(n.startswith("tests/") for n in names)
    info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "ci-stability = bot.cli:main" in zipfile.ZipFile(wheel).read(info).decode()
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    top = f"ci_stability_bot-{bot.__version__}"
    for needed in ("pyproject.toml", "app.yaml", "action.yml", ".pre-commit-hooks.yaml",
                   "schema/ci-stability.schema.json"):
        assert f"{top}/{needed}" in members


def test_the_wheel_runs_from_a_fresh_venv(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    wheel = next(dist.glob("*.whl"))
    subprocess.run([str(venv / "bin/pip"), "install", "--no-deps", "--quiet", str(wheel)],
                   check=True, env=offline_env(), timeout=300)
    # The dependencies come from the dev environment (installing them would need the
    # network); the package itself is only the wheel's copy.
    site = Path(subprocess.run([str(venv / "bin/python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "zz_dev_dependencies.pth").write_text(DEV_SITE + "\n")
    script = venv / "bin/ci-stability"
    env = offline_env()
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True,
                             cwd=tmp_path, env=env, check=True)
    assert version.stdout.strip() == f"ci-stability {bot.__version__}"
    where = subprocess.run([str(venv / "bin/python"), "-c", "import bot; print(bot.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, check=True)
    assert where.stdout.strip().startswith(str(site))
    example = ROOT / "examples/sglang-xeon-flagged.json"
    review = subprocess.run([str(script), "review", "--pr", str(example), "--format", "json",
                             "--fail-level", "none"], capture_output=True, text=True,
                            cwd=tmp_path, env=env, check=False)
    assert review.returncode == 0, review.stderr
    assert json.loads(review.stdout)["findings"]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e",
                    *args], check=True, capture_output=True)


def test_the_pre_commit_hook_reviews_staged_changes_with_real_pre_commit(
    tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".github/workflows").mkdir(parents=True)
    (repo / ".github/workflows/ci.yml").write_text(WORKFLOW)
    (repo / ".github/ci-stability.yml").write_text("fail_on: warning\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    (repo / ".github/workflows/ci.yml").write_text(SILENCED)
    (repo / "notes.md").write_text("unrelated\n")
    git(repo, "add", ".")
    # pre-commit builds its own virtualenv and `pip install`s this repository into it;
    # offline, pip finds the dependencies already installed through PYTHONPATH.
    env = offline_env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PYTHONPATH=DEV_SITE,
                      PIP_NO_BUILD_ISOLATION="0")
    done = subprocess.run([str(BIN / "pre-commit"), "try-repo", str(ROOT), "ci-stability",
                           "--verbose"], cwd=repo, capture_output=True, text=True, env=env,
                          check=False, timeout=900)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out  # fail_on: warning, committed at HEAD
    assert "CI stability review" in out and "Failed" in out
    assert ".github/workflows/ci.yml:3: warning [silenced-test]" in out
    assert "using the config HEAD:.github/ci-stability.yml" in out


def test_the_hooks_file_matches_surfaces_and_skips_the_rest() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["entry"] == "ci-stability review --staged" and hook["pass_filenames"] is False
    files = re.compile(hook["files"])
    for path in (".github/workflows/ci.yml", "tests/evals/gsm8k/configs/a.yaml",
                 "test/srt/cpu/test_x.py", "docker/Dockerfile.cpu", ".buildkite/test.yaml",
                 "vllm/tests/conftest.py"):
        assert files.search(path), path
    for path in ("README.md", "vllm/model_executor/layers/linear.py", "docs/index.md"):
        assert not files.search(path), path
