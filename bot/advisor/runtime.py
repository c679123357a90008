"""The advisor of one process: settings, token ledger, the model client, accounting.

`ask` checks both token budgets before sending, charges what the server reports
after, and reports every outcome (answered, failed, skipped) and the tokens to an
optional observer (the App's Prometheus metrics). The async client is built on
first use, so `openai` is imported only once a review actually asks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from bot.advisor.budget import TokenLedger
from bot.advisor.client import AdvisorFailure, Answer, ask_async, ask_sync, async_client
from bot.advisor.client import sync_client as make_sync_client
from bot.advisor.prompt import Prompt
from bot.advisor.settings import AdvisorSettings

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI

# (outcome, tokens): outcome is "answered", "failed" or "skipped".
Observer = Callable[[str, int], None]


class Advisor:
    def __init__(self, settings: AdvisorSettings, *, clock: Callable[[], float] = time.time,
                 observe: Observer | None = None) -> None:
        self.settings = settings
        self.ledger = TokenLedger(settings.per_pr_tokens, settings.per_day_tokens, clock)
        self.observe = observe
        self._async: AsyncOpenAI | None = None
        self._sync: OpenAI | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, clock: Callable[[], float] = time.time,
                 observe: Observer | None = None) -> Advisor | None:
        settings = AdvisorSettings.from_env(env)
        if settings is None:
            return None
        return cls(settings, clock=clock, observe=observe)

    def _cost(self, prompt: Prompt) -> int:
        return prompt.estimated_tokens + self.settings.max_completion_tokens

    def _before(self, pr: str, prompt: Prompt) -> None:
        refusal = self.ledger.refusal(pr, self._cost(prompt))
        if refusal is not None:
            self._note("skipped", 0)
            raise AdvisorFailure(f"skipped, {refusal}")

    def _after(self, pr: str, answer: Answer) -> Answer:
        self.ledger.charge(pr, answer.tokens)
        self._note("answered", answer.tokens)
        return answer

    def _note(self, outcome: str, tokens: int) -> None:
        if self.observe is not None:
            self.observe(outcome, tokens)

    async def ask(self, pr: str, prompt: Prompt) -> Answer:
        """The model's answer to `prompt` for the PR keyed `pr`, or AdvisorFailure."""
        self._before(pr, prompt)
        if self._async is None:
            self._async = async_client(self.settings)
        try:
            answer = await ask_async(self._async, self.settings, prompt.messages)
        except AdvisorFailure:
            self._note("failed", 0)
            raise
        return self._after(pr, answer)

    def ask_blocking(self, pr: str, prompt: Prompt) -> Answer:
        """`ask` for the CLI, with the sync client."""
        self._before(pr, prompt)
        if self._sync is None:
            self._sync = make_sync_client(self.settings)
        try:
            answer = ask_sync(self._sync, self.settings, prompt.messages)
        except AdvisorFailure:
            self._note("failed", 0)
            raise
        return self._after(pr, answer)

    async def aclose(self) -> None:
        if self._async is not None:
            await self._async.close()
        self.close()

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()
            self._sync = None
