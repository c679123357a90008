"""The real `openai` client against the fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from bot.advisor.client import AdvisorFailure, Answer
from bot.advisor.inputs import Block
from bot.advisor.prompt import build
from bot.advisor.runtime import Advisor
from bot.advisor.settings import AdvisorSettings, AdvisorSettingsError
from tests.fakeopenai import FakeOpenAI, Reply

PROMPT = build("task", [Block("runs", "run 1", ("CUDA out of memory",))], 2000, "Explain.")


@pytest.fixture()
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def asks(adv: Advisor, *prs: str) -> list[object]:
    """Ask once per PR key on one event loop (the async client belongs to one loop);
    each result is an Answer or the AdvisorFailure raised."""
    async def scenario() -> list[object]:
        out: list[object] = []
        for pr in prs:
            try:
                out.append(await adv.ask(pr, PROMPT))
            except AdvisorFailure as exc:
                out.append(exc)
        await adv.aclose()
        return out

    return asyncio.run(scenario())


def ask(adv: Advisor) -> Answer:
    (result,) = asks(adv, "o/r#1")
    if isinstance(result, AdvisorFailure):
        raise result
    assert isinstance(result, Answer)
    return result


def advisor(server: FakeOpenAI, **overrides: object) -> Advisor:
    values: dict[str, object] = {"base_url": server.url, "model": "qwen-test", "timeout": 1.0,
                                 "deadline": 10.0, "max_retries": 1, **overrides}
    return Advisor(AdvisorSettings(**values))  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_streamed_or_not_with_its_token_count(server: FakeOpenAI, stream: bool
                                                        ) -> None:
    server.script(Reply("Likely root cause: OOM.", prompt_tokens=321))
    adv = advisor(server, stream=stream)
    answer = ask(adv)
    assert answer.text == "Likely root cause: OOM." and answer.prompt_tokens == 321
    assert not answer.estimated and adv.ledger.spent("o/r#1") == answer.tokens
    sent = server.requests[-1]
    assert sent["model"] == "qwen-test" and bool(sent.get("stream")) is stream
    assert sent["messages"][0]["role"] == "system" and sent["max_tokens"] == 600
    if stream:
        assert sent["stream_options"] == {"include_usage": True}
    sync = advisor(server, stream=stream)
    server.script(Reply("Likely root cause: OOM.", prompt_tokens=321))
    assert sync.ask_blocking("o/r#1", PROMPT).text == "Likely root cause: OOM."
    sync.close()


def test_a_server_without_usage_is_counted_by_estimate(server: FakeOpenAI) -> None:
    server.script(Reply("Short answer.", usage=False))
    answer = ask(advisor(server, stream=True))
    assert answer.estimated and answer.tokens > 0


@pytest.mark.parametrize(("reply", "reason"), [
    (Reply(status=429), "429 (rate limited)"),
    (Reply(status=500), "answered 500"),
    (Reply(delay=3.0), "did not answer in time"),
])
def test_transient_failures_are_retried_then_reported(server: FakeOpenAI, reply: Reply,
                                                      reason: str) -> None:
    server.default = reply
    adv = advisor(server)
    with pytest.raises(AdvisorFailure, match=reason.replace("(", r"\(").replace(")", r"\)")):
        ask(adv)
    assert len(server.requests) == 2  # one retry (max_retries=1), transient only
    assert adv.ledger.spent() == 0


def test_a_transient_failure_then_an_answer(server: FakeOpenAI) -> None:
    server.script(Reply(status=503), Reply("Likely root cause: flaky runner."))
    answer = ask(advisor(server))
    assert answer.text.endswith("flaky runner.") and len(server.requests) == 2


def test_a_client_error_is_not_retried(server: FakeOpenAI) -> None:
    server.default = Reply(status=400)
    with pytest.raises(AdvisorFailure, match="answered 400"):
        advisor(server).ask_blocking("o/r#1", PROMPT)
    assert len(server.requests) == 1


def test_the_deadline_bounds_the_whole_exchange(server: FakeOpenAI) -> None:
    server.default = Reply(delay=2.0)
    with pytest.raises(AdvisorFailure, match="deadline"):
        ask(advisor(server, timeout=5.0, deadline=0.5))


def test_budgets_are_honoured_and_exhaustion_skips_without_a_request(server: FakeOpenAI
                                                                     ) -> None:
    cost = PROMPT.estimated_tokens + 100
    adv = advisor(server, max_completion_tokens=100, per_pr_tokens=cost * 2 + 10,
                  per_day_tokens=cost * 3 + 10)
    server.default = Reply("x" * 400, prompt_tokens=PROMPT.estimated_tokens)  # costs `cost`
    results = asks(adv, "o/r#1", "o/r#1", "o/r#1", "o/r#2", "o/r#3")
    assert [type(r).__name__ for r in results] == [
        "Answer", "Answer", "AdvisorFailure", "Answer", "AdvisorFailure"]
    assert "pull request's token budget" in str(results[2])
    assert "day's token budget" in str(results[4])
    assert len(server.requests) == 3
    assert adv.ledger.spent() <= adv.settings.per_day_tokens
    assert adv.ledger.spent("o/r#1") <= adv.settings.per_pr_tokens


def test_settings_come_from_the_environment_or_stay_off() -> None:
    assert AdvisorSettings.from_env({}) is None
    assert AdvisorSettings.from_env({"CI_STABILITY_LLM_BASE_URL": "http://127.0.0.1:8000/v1"}
                                    ) is None
    settings = AdvisorSettings.from_env({
        "CI_STABILITY_LLM_BASE_URL": "http://127.0.0.1:8000/v1/",
        "CI_STABILITY_LLM_MODEL": "Qwen/Qwen3-8B", "CI_STABILITY_LLM_STREAM": "1",
        "CI_STABILITY_LLM_PER_DAY_TOKENS": "1000", "OPENAI_API_KEY": "sk-secret-value"})
    assert settings is not None and settings.stream and settings.per_day_tokens == 1000
    assert settings.base_url == "http://127.0.0.1:8000/v1" and "sk-secret" not in repr(settings)
    with pytest.raises(AdvisorSettingsError, match="TIMEOUT must be a number"):
        AdvisorSettings.from_env({"CI_STABILITY_LLM_BASE_URL": "http://h/v1",
                                  "CI_STABILITY_LLM_MODEL": "m", "CI_STABILITY_LLM_TIMEOUT": "x"})
