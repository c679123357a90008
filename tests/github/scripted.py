"""A scripted driver: runs a flow against canned answers, the way gidgethub's tests
subclass its abstract API. Each expected call is matched by method and URL (and,
optionally, params/body), so a flow's conversation with GitHub is pinned exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bot.github.calls import ApiCall, ApiResult, Flow

T = TypeVar("T")


@dataclass(frozen=True)
class Step:
    method: str
    url: str
    answer: ApiResult
    params: dict[str, Any] | None = None  # checked only when given
    body: Any = None  # checked only when given


def answer(status: int = 200, data: Any = None, **headers: str) -> ApiResult:
    return ApiResult(status, {k.replace("_", "-").lower(): v for k, v in headers.items()}, data)


@dataclass
class ScriptedDriver:
    script: Sequence[Step]
    calls: list[ApiCall] = field(default_factory=list)

    def run(self, flow: Flow[T]) -> T:
        steps = iter(self.script)
        try:
            call = next(flow)
            while True:
                self.calls.append(call)
                step = next(steps, None)
                assert step is not None, f"unexpected call {call.method} {call.url}"
                assert (call.method.upper(), call.url) == (step.method, step.url), (
                    f"expected {step.method} {step.url}, got {call.method} {call.url}")
                if step.params is not None:
                    assert dict(call.params or {}) == step.params
                if step.body is not None:
                    assert call.body == step.body
                call = flow.send(step.answer)
        except StopIteration as done:
            left = list(steps)
            assert not left, f"flow ended with {len(left)} scripted call(s) unused"
            value: T = done.value
            return value
