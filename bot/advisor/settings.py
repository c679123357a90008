"""The advisor's settings, from the environment: absent unless an operator opts in.

`CI_STABILITY_LLM_BASE_URL` and `CI_STABILITY_LLM_MODEL` together turn it on (for the
process; each repository still has to say `advisor: true`). `OPENAI_API_KEY` is only
needed by servers that check one: a local vLLM or SGLang server usually does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

BASE_URL_VAR = "CI_STABILITY_LLM_BASE_URL"
MODEL_VAR = "CI_STABILITY_LLM_MODEL"
KEY_VAR = "OPENAI_API_KEY"
# A local server that checks no key still needs a non-empty one for the client.
NO_KEY = "not-needed"


class AdvisorSettingsError(ValueError):
    """A malformed advisor variable, named without echoing a secret."""


@dataclass(frozen=True)
class AdvisorSettings:
    base_url: str
    model: str
    api_key: str = field(default=NO_KEY, repr=False)
    timeout: float = 20.0  # seconds per attempt
    deadline: float = 45.0  # seconds for the whole advice, retries included
    max_retries: int = 2  # transient errors only (connection, timeout, 408/409/429/5xx)
    stream: bool = False
    prompt_tokens: int = 6_000  # the input budget the prompt is trimmed to
    max_completion_tokens: int = 600
    per_pr_tokens: int = 20_000  # per pull request per day
    per_day_tokens: int = 400_000  # for the whole process per UTC day

    @property
    def call_cost(self) -> int:
        """The most one request can spend: what the budgets must still have room for."""
        return self.prompt_tokens + self.max_completion_tokens

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> AdvisorSettings | None:
        base_url = env.get(BASE_URL_VAR, "").strip()
        model = env.get(MODEL_VAR, "").strip()
        if not base_url or not model:
            return None
        parts = urlsplit(base_url)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            raise AdvisorSettingsError(f"{BASE_URL_VAR} must be an http(s) URL")
        values: dict[str, float | int | bool] = {}
        for name, kind in (("timeout", float), ("deadline", float), ("max_retries", int),
                           ("prompt_tokens", int), ("max_completion_tokens", int),
                           ("per_pr_tokens", int), ("per_day_tokens", int)):
            raw = env.get(f"CI_STABILITY_LLM_{name.upper()}", "").strip()
            if not raw:
                continue
            try:
                number = kind(raw)
            except ValueError:
                raise AdvisorSettingsError(
                    f"CI_STABILITY_LLM_{name.upper()} must be a number, got {raw[:20]!r}"
                ) from None
            if number < 0 or (number == 0 and name != "max_retries"):
                raise AdvisorSettingsError(f"CI_STABILITY_LLM_{name.upper()} must be positive")
            values[name] = number
        stream = env.get("CI_STABILITY_LLM_STREAM", "").strip().lower() in {"1", "true", "yes"}
        key = env.get(KEY_VAR, "").strip() or NO_KEY
        return cls(base_url=base_url.rstrip("/"), model=model, api_key=key, stream=stream,
                   **values)  # type: ignore[arg-type]
