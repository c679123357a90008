"""Chat completions against any OpenAI-compatible server (the `openai` package).

`AsyncOpenAI` for the App, `OpenAI` for the CLI. The client itself retries only
transient failures (connection errors, timeouts, 408/409/429/5xx, honouring a short
Retry-After) up to `max_retries` times; a 4xx such as a bad model name is final. The
App also bounds the whole exchange with `deadline`. Every failure becomes an
`AdvisorFailure` whose reason is fit for the check run ("the model server answered
429 (rate limited)").

`openai` is imported only when a client is built, so a process that never turns the
advisor on never imports it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.advisor.prompt import estimate_tokens
from bot.advisor.settings import AdvisorSettings

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI


class AdvisorFailure(Exception):
    """The advisor gave no usable answer; `reason` says why, for people."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Answer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    estimated: bool = False  # the server reported no usage; counted from the text

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def async_client(settings: AdvisorSettings) -> AsyncOpenAI:
    import openai

    return openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key,
                              timeout=settings.timeout, max_retries=settings.max_retries)


def sync_client(settings: AdvisorSettings) -> OpenAI:
    import openai

    return openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key,
                         timeout=settings.timeout, max_retries=settings.max_retries)


def _request(settings: AdvisorSettings, messages: tuple[dict[str, str], ...]
             ) -> dict[str, Any]:
    request: dict[str, Any] = {"model": settings.model, "messages": list(messages),
                               "max_tokens": settings.max_completion_tokens,
                               "temperature": 0.2}
    if settings.stream:
        request["stream"] = True
        request["stream_options"] = {"include_usage": True}
    return request


def _reason(exc: BaseException, settings: AdvisorSettings) -> str:
    import openai

    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return f"the model server did not answer in time ({settings.timeout:g} s per attempt)"
    if isinstance(exc, openai.RateLimitError):
        return "the model server answered 429 (rate limited), also after retries"
    if isinstance(exc, openai.APIStatusError):
        return f"the model server answered {exc.status_code}"
    if isinstance(exc, openai.APIConnectionError):
        return "the model server could not be reached"
    return f"the model server's answer could not be read ({type(exc).__name__})"


def _finish(text: str, usage: Any, messages: tuple[dict[str, str], ...], started: float
            ) -> Answer:
    text = text.strip()
    if not text:
        raise AdvisorFailure("the model gave an empty answer")
    seconds = time.monotonic() - started
    if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
        return Answer(text, int(usage.prompt_tokens), int(usage.completion_tokens or 0),
                      seconds)
    prompt = sum(estimate_tokens(m["content"]) for m in messages)
    return Answer(text, prompt, estimate_tokens(text), seconds, estimated=True)


def _message_text(completion: Any) -> str:
    choices = getattr(completion, "choices", None) or []
    if not choices:
        return ""
    return str(getattr(choices[0].message, "content", None) or "")


async def ask_async(client: AsyncOpenAI, settings: AdvisorSettings,
                    messages: tuple[dict[str, str], ...]) -> Answer:
    """One chat completion, streamed or not as configured, within `settings.deadline`."""
    started = time.monotonic()

    async def exchange() -> Answer:
        request = _request(settings, messages)
        result: Any = await client.chat.completions.create(**request)
        if not settings.stream:
            return _finish(_message_text(result), result.usage, messages, started)
        parts: list[str] = []
        usage = None
        async for chunk in result:
            usage = chunk.usage or usage
            if chunk.choices and chunk.choices[0].delta.content:
                parts.append(chunk.choices[0].delta.content)
        return _finish("".join(parts), usage, messages, started)

    try:
        return await asyncio.wait_for(exchange(), settings.deadline)
    except AdvisorFailure:
        raise
    except TimeoutError:
        raise AdvisorFailure(f"no answer within the advisor's {settings.deadline:g} s "
                             "deadline") from None
    except Exception as exc:  # any failure of the advisor leaves the review as it is
        raise AdvisorFailure(_reason(exc, settings)) from exc


def ask_sync(client: OpenAI, settings: AdvisorSettings,
             messages: tuple[dict[str, str], ...]) -> Answer:
    """The CLI's blocking twin of `ask_async` (bounded per attempt by `timeout`)."""
    started = time.monotonic()
    try:
        request = _request(settings, messages)
        result: Any = client.chat.completions.create(**request)
        if not settings.stream:
            return _finish(_message_text(result), result.usage, messages, started)
        parts: list[str] = []
        usage = None
        for chunk in result:
            usage = chunk.usage or usage
            if chunk.choices and chunk.choices[0].delta.content:
                parts.append(chunk.choices[0].delta.content)
        return _finish("".join(parts), usage, messages, started)
    except AdvisorFailure:
        raise
    except Exception as exc:
        raise AdvisorFailure(_reason(exc, settings)) from exc
