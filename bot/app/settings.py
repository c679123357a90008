"""The App's settings, read once from the environment at start-up.

`Settings.from_env` checks every variable before failing, so an operator fixes a
broken deployment in one round instead of one error per restart. Error messages
name the variable and the problem but never echo a secret's value.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from bot.core.limits import DEFAULT_LIMITS, HARD_MAX_BYTES, HARD_MAX_FILES, MIN_BYTES, ReviewLimits
from bot.store import redacted_url, url_password

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_DB = "./ci-stability.db"
DEFAULT_PORT = 8080
DEFAULT_METRICS_PORT = 9464  # the port OpenTelemetry's Prometheus exporter uses
MAX_KEY_FILE_BYTES = 64 * 1024  # a 4096-bit RSA PEM is ~3.3 kB

T = TypeVar("T")


class SettingsError(Exception):
    """One or more settings are missing or malformed; `problems` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid settings ({len(problems)} problem(s)):\n{lines}")


@dataclass(frozen=True)
class Settings:
    app_id: int
    private_key: str = field(repr=False)
    webhook_secret: str = field(repr=False)
    api_url: str = DEFAULT_API_URL
    db_path: str = DEFAULT_DB
    port: int = DEFAULT_PORT
    buildkite_webhook_token: str | None = field(default=None, repr=False)
    buildkite_api_token: str | None = field(default=None, repr=False)
    workers: int = 2
    # A claim not renewed for this long is taken over by another replica.
    lease_seconds: float = 60.0
    # SIGTERM: how long running reviews may finish before they are handed back.
    drain_seconds: float = 30.0
    debounce_seconds: float = 5.0
    max_attempts: int = 5
    buildkite_api_url: str = "https://api.buildkite.com"
    # The App's own account ("<app-slug>[bot]"), to find its summary comment.
    bot_login: str = "ci-stability-bot[bot]"
    # The failure dashboard (GET /) exists only when this is set, and asks for it.
    dashboard_token: str | None = field(default=None, repr=False)
    # Whether CI_STABILITY_BOT_LOGIN was given: then a mismatch with the App is fatal.
    bot_login_set: bool = False
    # `/metrics` listens here, apart from the public webhook port (0: any free port).
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = DEFAULT_METRICS_PORT
    # When set, `/metrics` is also on the webhook port, behind this bearer token.
    metrics_token: str | None = field(default=None, repr=False)
    # Threads running reviews' CPU work (snapshot, engine) off the event loop.
    review_threads: int = 2
    # The most one review reads; a repository's `limits:` may only lower it.
    review_limits: ReviewLimits = DEFAULT_LIMITS
    intake_process: bool = False  # intake's writer process (bot/store/intake_process.py)

    def __repr__(self) -> str:
        # Says which secrets are set without a single character of them.
        return (
            f"Settings(app_id={self.app_id}, api_url={self.api_url!r}, "
            f"db_path={redacted_url(self.db_path)!r}, port={self.port}, workers={self.workers}, "
            f"debounce_seconds={self.debounce_seconds}, max_attempts={self.max_attempts}, "
            f"private_key=<redacted>, webhook_secret=<redacted>, "
            f"buildkite_webhook_token={_presence(self.buildkite_webhook_token)}, "
            f"buildkite_api_token={_presence(self.buildkite_api_token)}, "
            f"dashboard_token={_presence(self.dashboard_token)}, "
            f"metrics_token={_presence(self.metrics_token)})"
        )

    __str__ = __repr__

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret value, for the log redaction filter."""
        values = (
            self.private_key, self.webhook_secret,
            self.buildkite_webhook_token, self.buildkite_api_token, url_password(self.db_path),
            self.dashboard_token, self.metrics_token,
        )
        return tuple(v for v in values if v)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        reader = _Reader(env)
        app_id = reader.parse("GITHUB_APP_ID", _positive_int, required=True)
        private_key = _private_key(env, reader.problems)
        secret = reader.raw("GITHUB_WEBHOOK_SECRET")
        if secret is None:
            reader.problems.append(
                "GITHUB_WEBHOOK_SECRET is required: the webhook secret set on the App "
                "(unsigned deliveries are never accepted)"
            )
        api_url = reader.parse("GITHUB_API_URL", _http_url) or DEFAULT_API_URL
        db_path = reader.raw("CI_STABILITY_DB") or DEFAULT_DB
        port = reader.parse("PORT", _port)
        workers = reader.parse("CI_STABILITY_WORKERS", _int_between(0, 64))
        debounce = reader.parse("CI_STABILITY_DEBOUNCE_SECONDS", _seconds)
        attempts = reader.parse("CI_STABILITY_MAX_ATTEMPTS", _int_between(1, 100))
        lease = reader.parse("CI_STABILITY_LEASE_SECONDS", _lease)
        drain = reader.parse("CI_STABILITY_DRAIN_SECONDS", _seconds)
        buildkite_url = reader.parse("BUILDKITE_API_URL", _http_url)
        metrics_port = reader.parse("METRICS_PORT", _metrics_port)
        threads = reader.parse("CI_STABILITY_REVIEW_THREADS", _int_between(1, 64))
        writer = reader.parse("CI_STABILITY_INTAKE_PROCESS", _int_between(0, 1))
        max_files = reader.parse("CI_STABILITY_MAX_FILES", _int_between(1, HARD_MAX_FILES))
        max_bytes = reader.parse("CI_STABILITY_MAX_BYTES", _int_between(MIN_BYTES, HARD_MAX_BYTES))
        bot_login = reader.raw("CI_STABILITY_BOT_LOGIN")
        if bot_login is not None and not bot_login.endswith("[bot]"):
            reader.problems.append(
                f"CI_STABILITY_BOT_LOGIN must be the App's bot account, '<app-slug>[bot]', "
                f"not {bot_login!r}"
            )
        if reader.problems or app_id is None or private_key is None or secret is None:
            raise SettingsError(reader.problems)
        return cls(
            app_id=app_id,
            private_key=private_key,
            webhook_secret=secret,
            api_url=api_url,
            db_path=db_path,
            port=DEFAULT_PORT if port is None else port,
            buildkite_webhook_token=reader.raw("BUILDKITE_WEBHOOK_TOKEN"),
            buildkite_api_token=reader.raw("BUILDKITE_API_TOKEN"),
            workers=2 if workers is None else workers,
            debounce_seconds=5.0 if debounce is None else debounce,
            max_attempts=5 if attempts is None else attempts,
            lease_seconds=60.0 if lease is None else lease,
            drain_seconds=30.0 if drain is None else drain,
            buildkite_api_url=buildkite_url or "https://api.buildkite.com",
            bot_login=bot_login or "ci-stability-bot[bot]",
            dashboard_token=reader.raw("CI_STABILITY_DASHBOARD_TOKEN"),
            bot_login_set=bot_login is not None,
            metrics_host=reader.raw("METRICS_HOST") or "127.0.0.1",
            metrics_port=DEFAULT_METRICS_PORT if metrics_port is None else metrics_port.port,
            metrics_token=reader.raw("METRICS_TOKEN"),
            review_threads=2 if threads is None else threads,
            review_limits=ReviewLimits(max_files or DEFAULT_LIMITS.max_files,
                                       max_bytes or DEFAULT_LIMITS.max_bytes),
            intake_process=writer == 1,
        )


def _presence(value: str | None) -> str:
    return "<set>" if value else "<unset>"


class _Reader:
    """Collects problems instead of raising at the first one."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []

    def raw(self, name: str) -> str | None:
        value = self.env.get(name, "").strip()
        return value or None

    def parse(self, name: str, convert: Callable[[str], T], required: bool = False) -> T | None:
        value = self.raw(name)
        if value is None:
            if required:
                self.problems.append(f"{name} is required")
            return None
        try:
            return convert(value)
        except ValueError as exc:
            self.problems.append(f"{name}={value!r} is invalid: {exc}")
            return None


def _positive_int(text: str) -> int:
    return _int_between(1, 2**63 - 1)(text)


def _int_between(low: int, high: int) -> Callable[[str], int]:
    def convert(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise ValueError("expected an integer") from None
        if not low <= number <= high:
            raise ValueError(f"expected an integer from {low} to {high}")
        return number

    return convert


def _port(text: str) -> int:
    return _int_between(1, 65535)(text)


@dataclass(frozen=True)
class _MetricsPort:
    port: int | None  # None: no metrics listener


def _metrics_port(text: str) -> _MetricsPort:
    if text.strip().lower() == "off":
        return _MetricsPort(None)
    try:
        return _MetricsPort(_int_between(0, 65535)(text))
    except ValueError:
        raise ValueError("expected a port from 0 to 65535 (0: any free port) or 'off'") from None


def _seconds(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise ValueError("expected a number of seconds") from None
    if not 0 <= number <= 3600:
        raise ValueError("expected a number of seconds from 0 to 3600")
    return number


def _lease(text: str) -> float:
    seconds = _seconds(text)
    if seconds < 1:
        raise ValueError("expected at least 1 second")
    return seconds


def _http_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("expected an http:// or https:// URL such as https://api.github.com")
    return text.rstrip("/")


def _private_key(env: Mapping[str, str], problems: list[str]) -> str | None:
    inline = env.get("GITHUB_PRIVATE_KEY", "").strip()
    path = env.get("GITHUB_PRIVATE_KEY_PATH", "").strip()
    if inline and path:
        problems.append("set only one of GITHUB_PRIVATE_KEY and GITHUB_PRIVATE_KEY_PATH")
        return None
    if not inline and not path:
        problems.append(
            "GITHUB_PRIVATE_KEY (PEM text) or GITHUB_PRIVATE_KEY_PATH (a .pem file) is required"
        )
        return None
    if path:
        source = f"GITHUB_PRIVATE_KEY_PATH={path!r}"
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_KEY_FILE_BYTES + 1)
        except OSError as exc:
            problems.append(f"{source}: cannot read the file: {exc.strerror or exc}")
            return None
        if len(data) > MAX_KEY_FILE_BYTES:
            problems.append(f"{source}: file is too large to be a PEM private key")
            return None
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError:
            problems.append(f"{source}: not a PEM file (non-ASCII bytes)")
            return None
    else:
        source = "GITHUB_PRIVATE_KEY"
        # Many deployment tools cannot hold newlines in a variable and pass `\n` instead.
        text = inline.replace("\\n", "\n") if "\n" not in inline else inline
    problem = _check_rsa_pem(text)
    if problem:
        problems.append(f"{source}: {problem}")
        return None
    return text.strip() + "\n"


def _check_rsa_pem(text: str) -> str | None:
    """Why the text is not a usable RSA private key, or None; never quotes the key."""
    if "-----BEGIN" not in text:
        return "not PEM text (expected a '-----BEGIN RSA PRIVATE KEY-----' block)"
    try:
        key = load_pem_private_key(text.encode("ascii", "replace"), password=None)
    except TypeError:
        return "the key is encrypted; GitHub App keys are used without a passphrase"
    except Exception:  # cryptography raises several types (ValueError, UnsupportedAlgorithm)
        return "could not be parsed as a PEM private key"
    if not isinstance(key, RSAPrivateKey):
        return "not an RSA key (GitHub Apps sign their JWTs with RS256)"
    return None

