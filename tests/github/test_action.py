"""The composite GitHub Action runs the CLI twin on pull_request events."""

from __future__ import annotations

from pathlib import Path

import yaml

ACTION = Path(__file__).resolve().parents[2] / "action.yml"


def test_action_installs_the_package_and_posts_the_review() -> None:
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    review = next(s for s in steps if "ci-stability review" in s.get("run", ""))
    assert 'ci-stability review --github "$REPOSITORY#$PR_NUMBER" --post' in review["run"]
    assert review["env"]["REPOSITORY"] == "${{ github.repository }}"
    assert review["env"]["PR_NUMBER"] == "${{ github.event.pull_request.number }}"
    assert review["env"]["GITHUB_TOKEN"] == "${{ inputs.github-token }}"
    # Untrusted event data never appears inside a script, only in the environment.
    assert all("${{" not in s.get("run", "") for s in steps)
