"""Settings from the environment: every problem reported at once, secrets never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app.settings import Settings, SettingsError
from tests.app.helpers import ec_pem, rsa_pem

SECRET = "whsec-do-not-print-me"


def env(**overrides: str) -> dict[str, str]:
    base = {"GITHUB_APP_ID": "12345", "GITHUB_PRIVATE_KEY": rsa_pem(),
            "GITHUB_WEBHOOK_SECRET": SECRET}
    base.update(overrides)
    return {k: v for k, v in base.items() if v != "<unset>"}


def problems(environ: dict[str, str]) -> list[str]:
    with pytest.raises(SettingsError) as info:
        Settings.from_env(environ)
    return info.value.problems


def test_minimal_environment_gets_the_documented_defaults() -> None:
    settings = Settings.from_env(env())
    assert settings.app_id == 12345
    assert settings.webhook_secret == SECRET
    assert settings.private_key.startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert settings.api_url == "https://api.github.com"
    assert settings.db_path == "./ci-stability.db"
    assert settings.port == 8080
    assert (settings.workers, settings.debounce_seconds, settings.max_attempts) == (2, 5.0, 5)
    assert settings.buildkite_webhook_token is None and settings.buildkite_api_token is None


def test_every_variable_is_read() -> None:
    settings = Settings.from_env(env(
        GITHUB_API_URL="http://127.0.0.1:9999/api/v3/", CI_STABILITY_DB="/tmp/x.db",
        PORT="9000", BUILDKITE_WEBHOOK_TOKEN="bk-hook", BUILDKITE_API_TOKEN="bk-api",
        CI_STABILITY_WORKERS="0", CI_STABILITY_DEBOUNCE_SECONDS="1.5",
        CI_STABILITY_MAX_ATTEMPTS="7",
    ))
    assert settings.api_url == "http://127.0.0.1:9999/api/v3"
    assert (settings.db_path, settings.port) == ("/tmp/x.db", 9000)
    assert (settings.buildkite_webhook_token, settings.buildkite_api_token) == ("bk-hook",
                                                                                 "bk-api")
    assert (settings.workers, settings.debounce_seconds, settings.max_attempts) == (0, 1.5, 7)


def test_key_from_a_file(tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text(rsa_pem())
    settings = Settings.from_env(env(GITHUB_PRIVATE_KEY="<unset>",
                                     GITHUB_PRIVATE_KEY_PATH=str(key)))
    assert settings.private_key.strip() == rsa_pem().strip()


def test_key_with_escaped_newlines_is_accepted() -> None:
    one_line = rsa_pem().strip().replace("\n", "\\n")
    assert Settings.from_env(env(GITHUB_PRIVATE_KEY=one_line)).private_key.count("\n") > 10


def test_every_problem_is_listed_at_once() -> None:
    found = problems({"GITHUB_APP_ID": "abc", "GITHUB_API_URL": "ftp://example.com",
                      "PORT": "70000", "CI_STABILITY_WORKERS": "many",
                      "CI_STABILITY_DEBOUNCE_SECONDS": "-1", "CI_STABILITY_MAX_ATTEMPTS": "0"})
    text = "\n".join(found)
    for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET",
                 "GITHUB_API_URL", "PORT", "CI_STABILITY_WORKERS",
                 "CI_STABILITY_DEBOUNCE_SECONDS", "CI_STABILITY_MAX_ATTEMPTS"):
        assert name in text
    assert len(found) == 8
    assert "8 problem(s)" in str(SettingsError(found))


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("GITHUB_APP_ID", "", "GITHUB_APP_ID is required"),
    ("GITHUB_APP_ID", "-3", "expected an integer from 1"),
    ("GITHUB_WEBHOOK_SECRET", "  ", "GITHUB_WEBHOOK_SECRET is required"),
    ("GITHUB_API_URL", "api.github.com", "http:// or https://"),
    ("PORT", "0", "from 1 to 65535"),
    ("PORT", "http", "expected an integer"),
])
def test_each_malformed_variable_has_a_clear_message(name: str, value: str,
                                                      expected: str) -> None:
    [problem] = problems(env(**{name: value}))
    assert name in problem and expected in problem


def test_key_problems_never_echo_the_key(tmp_path: Path) -> None:
    not_rsa = ec_pem()
    [problem] = problems(env(GITHUB_PRIVATE_KEY=not_rsa))
    assert "not an RSA key" in problem and not_rsa.splitlines()[1] not in problem
    garbage = "-----BEGIN RSA PRIVATE KEY-----\nTOPSECRETGARBAGE\n-----END RSA PRIVATE KEY-----"
    [problem] = problems(env(GITHUB_PRIVATE_KEY=garbage))
    assert "could not be parsed" in problem and "TOPSECRETGARBAGE" not in problem
    [problem] = problems(env(GITHUB_PRIVATE_KEY="hunter2"))
    assert "not PEM" in problem and "hunter2" not in problem


def test_key_path_problems(tmp_path: Path) -> None:
    missing = tmp_path / "missing.pem"
    [problem] = problems(env(GITHUB_PRIVATE_KEY="<unset>", GITHUB_PRIVATE_KEY_PATH=str(missing)))
    assert "GITHUB_PRIVATE_KEY_PATH" in problem and "cannot read" in problem
    [problem] = problems(env(GITHUB_PRIVATE_KEY_PATH=str(missing)))
    assert "only one of" in problem
    [problem] = problems(env(GITHUB_PRIVATE_KEY="<unset>"))
    assert "GITHUB_PRIVATE_KEY" in problem and "required" in problem


def test_repr_reveals_no_secret() -> None:
    settings = Settings.from_env(env(BUILDKITE_API_TOKEN="bk-api-token-value"))
    for text in (repr(settings), str(settings), f"{settings}"):
        assert SECRET not in text
        assert "bk-api-token-value" not in text
        assert "PRIVATE KEY" not in text and rsa_pem().splitlines()[1] not in text
        assert "app_id=12345" in text and "<redacted>" in text
    assert set(settings.secrets) == {SECRET, settings.private_key, "bk-api-token-value"}


def test_metrics_listen_on_loopback_apart_from_the_webhook_port_by_default() -> None:
    settings = Settings.from_env(env())
    assert (settings.metrics_host, settings.metrics_port, settings.metrics_token) == (
        "127.0.0.1", 9464, None)
    assert settings.review_threads == 2 and not settings.bot_login_set
    chosen = Settings.from_env(env(METRICS_PORT="0", METRICS_HOST="0.0.0.0",
                                   METRICS_TOKEN="tok-secret", CI_STABILITY_REVIEW_THREADS="4",
                                   CI_STABILITY_BOT_LOGIN="my-app[bot]"))
    assert (chosen.metrics_host, chosen.metrics_port, chosen.review_threads) == (
        "0.0.0.0", 0, 4)
    assert chosen.bot_login_set and "tok-secret" in chosen.secrets
    assert "tok-secret" not in repr(chosen)
    assert Settings.from_env(env(METRICS_PORT="off")).metrics_port is None
    assert not settings.intake_process  # intake commits on the loop unless asked
    assert Settings.from_env(env(CI_STABILITY_INTAKE_PROCESS="1")).intake_process


@pytest.mark.parametrize(("name", "value"), [
    ("METRICS_PORT", "65536"), ("METRICS_PORT", "nine"), ("CI_STABILITY_REVIEW_THREADS", "0"),
    ("CI_STABILITY_INTAKE_PROCESS", "yes"),
])
def test_bad_metrics_port_or_pool_size_is_named(name: str, value: str) -> None:
    assert any(name in problem for problem in problems(env(**{name: value})))
