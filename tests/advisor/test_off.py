"""With the advisor off nothing changes, and `openai` is never imported on the review path.

Each check runs in a fresh interpreter: this test process has imported `openai` for
other tests, so only a new one can tell whether the review path imports it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ADVISOR_VARS = ("CI_STABILITY_LLM_BASE_URL", "CI_STABILITY_LLM_MODEL", "OPENAI_API_KEY")


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ADVISOR_VARS}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=300, check=False)


def test_the_cli_review_never_imports_openai(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from bot.cli import main\n"
        "main(['review', '--pr', 'examples/vllm-51015-glm-pcp-allocator.json',\n"
        "      '--fail-level', 'none', '--format', 'json'])\n"
        "assert 'openai' not in sys.modules, 'openai imported'\n"
        "print('NO-OPENAI')\n"
    )
    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "NO-OPENAI" in done.stdout and '"findings"' in done.stdout


def test_an_app_review_with_the_advisor_off_never_imports_openai(tmp_path: Path) -> None:
    """A whole App review (webhook → check, summary, evidence, `/stability runs`)."""
    code = (
        "import sys, pathlib\n"
        "from tests.app import test_e2e_evidence as e2e\n"
        f"e2e.test_indexed_failure_and_duplicate_show_in_review_and_runs_command("
        f"pathlib.Path({str(tmp_path)!r}))\n"
        "import bot.app.compose, bot.app.advisor, bot.app.command_handler\n"
        "assert 'openai' not in sys.modules, 'openai imported'\n"
        "print('NO-OPENAI')\n"
    )
    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "NO-OPENAI" in done.stdout
