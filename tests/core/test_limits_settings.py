"""Where the review's ceiling is set: the App's environment and the CLI's flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app.settings import Settings, SettingsError
from bot.cli import main
from bot.core.limits import DEFAULT_LIMITS, ReviewLimits
from tests.app.helpers import rsa_pem


def env(**extra: str) -> dict[str, str]:
    return {"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": rsa_pem(),
            "GITHUB_WEBHOOK_SECRET": "s", **extra}


def test_the_app_ceiling_comes_from_the_environment() -> None:
    assert Settings.from_env(env()).review_limits == DEFAULT_LIMITS
    settings = Settings.from_env(env(CI_STABILITY_MAX_FILES="300",
                                     CI_STABILITY_MAX_BYTES="1048576"))
    assert settings.review_limits == ReviewLimits(300, 1048576)


@pytest.mark.parametrize(("name", "value"), [
    ("CI_STABILITY_MAX_FILES", "0"), ("CI_STABILITY_MAX_FILES", "many"),
    ("CI_STABILITY_MAX_BYTES", "10"),
])
def test_a_bad_ceiling_is_a_settings_problem(name: str, value: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env(**{name: value}))
    assert any(name in problem for problem in caught.value.problems)


def _patch(count: int) -> str:
    return "".join(f"diff --git a/f{i}.py b/f{i}.py\n--- a/f{i}.py\n+++ b/f{i}.py\n"
                   f"@@ -1 +1 @@\n-a\n+b\n" for i in range(count))


def test_the_cli_flag_caps_a_review(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    patch = tmp_path / "big.patch"
    patch.write_text(_patch(5))
    config = tmp_path / "cfg.yml"
    config.write_text("limits:\n  max_files: 4\n")
    code = main(["review", "--patch", str(patch), "--config", str(config),
                 "--max-files", "2", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "Review capped at 2 files" in out and "`f2.py`, `f3.py`, `f4.py`" in out
    assert "max_files 4 is above this installation's ceiling of 2" in err


@pytest.mark.parametrize("flag", [["--max-files", "0"], ["--max-bytes", "x"]])
def test_a_bad_flag_is_a_usage_error(tmp_path: Path, flag: list[str],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    patch = tmp_path / "p.patch"
    patch.write_text(_patch(1))
    assert main(["review", "--patch", str(patch), *flag]) == 2
    assert flag[0] in capsys.readouterr().err
