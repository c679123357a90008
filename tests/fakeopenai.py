"""A fake OpenAI-compatible server (what vLLM and SGLang serve), on loopback.

`POST /v1/chat/completions` in the real wire format: a `chat.completion` object, or
with `"stream": true` server-sent events of `chat.completion.chunk` objects ending in
`data: [DONE]`, with a usage chunk when `stream_options.include_usage` asks for one.
Errors use the API's `{"error": {...}}` body. Each request takes the next scripted
`Reply` (or the default one) and is recorded, so tests see exactly what the real
`openai` client sent. It runs its own event loop in a thread, so both the async
client (the App) and the sync client (the CLI) can talk to it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web


@dataclass
class Reply:
    text: str = "Likely root cause: the evidence is thin."
    status: int = 200
    delay: float = 0.0  # seconds before answering (a slow server; past the timeout)
    usage: bool = True  # report token usage
    prompt_tokens: int | None = None  # None: a count derived from the request


class FakeOpenAI:
    def __init__(self, default: Reply | None = None) -> None:
        self.default = default or Reply()
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.url = ""

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> str:
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self.url

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"http://127.0.0.1:{port}/v1"

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting -----------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def prompt_text(self, index: int = -1) -> str:
        """Everything the client sent in request `index`'s messages."""
        return "\n".join(m["content"] for m in self.requests[index]["messages"])

    # -- the endpoint --------------------------------------------------------------------
    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        reply = self.replies.popleft() if self.replies else self.default
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            kind = {429: "rate_limit_exceeded", 400: "invalid_request_error"}.get(
                reply.status, "server_error")
            return web.json_response(
                {"error": {"message": f"fake error {reply.status}", "type": kind,
                           "param": None, "code": kind}}, status=reply.status)
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else sum(
            len(m["content"]) // 4 for m in body["messages"])
        completion = max(1, len(reply.text) // 4)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion,
                 "total_tokens": prompt + completion}
        ident, created = f"chatcmpl-{len(self.requests)}", int(time.time())
        if not body.get("stream"):
            return web.json_response({
                "id": ident, "object": "chat.completion", "created": created,
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": reply.text}}],
                "usage": usage if reply.usage else None,
            })
        return await self._stream(request, body, reply, ident, created, usage)

    async def _stream(self, request: web.Request, body: dict[str, Any], reply: Reply,
                      ident: str, created: int, usage: dict[str, int]) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def event(choices: list[dict[str, Any]], **extra: Any) -> None:
            chunk = {"id": ident, "object": "chat.completion.chunk", "created": created,
                     "model": body["model"], "choices": choices, **extra}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())

        await event([{"index": 0, "delta": {"role": "assistant", "content": ""},
                      "finish_reason": None}])
        step = max(1, len(reply.text) // 3)
        for start in range(0, len(reply.text), step):
            await event([{"index": 0, "delta": {"content": reply.text[start:start + step]},
                          "finish_reason": None}])
        await event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
        wants_usage = (body.get("stream_options") or {}).get("include_usage")
        if wants_usage and reply.usage:
            await event([], usage=usage)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
