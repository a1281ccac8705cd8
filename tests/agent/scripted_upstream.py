"""A scripted OpenAI-compatible upstream on 127.0.0.1, for the edge cases a real model rarely shows.

Each request consumes the next script: a list of steps that write SSE
frames, pause, drop the connection, or answer with an HTTP error. The
server records every request body and notices when a client disconnects
(the interrupt tests need to see the connection close).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from hermes_gateway._core.config import Config, parse_config
from hermes_gateway.testing import serve_locally


def model_config(base_url: str | None = None, **model: Any) -> Config:
    """A Config whose model points at ``base_url`` (None: the in-process demo model, unpaced)."""
    section: dict[str, Any] = {"demo": {"tokens_per_second": 0}, **model}
    if base_url:
        section.setdefault("base_url", base_url)
        section.setdefault("name", "test-model")
    return parse_config({"model": section})


def chunk(content: str | None = None, *, tool_calls: list[dict] | None = None, finish: str | None = None,
          role: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def usage_chunk(prompt: int, completion: int) -> dict[str, Any]:
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": [],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


def completion(content: str | None, *, tool_calls: list[dict] | None = None,
               usage: tuple[int, int] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": "fake",
                            "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if tool_calls else "stop"}]}
    if usage:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return body


def text_stream(*pieces: str, usage: tuple[int, int] | None = None, done: bool = True) -> list[tuple]:
    """Steps for a plain streamed text answer."""
    steps: list[tuple] = [("data", chunk("", role="assistant"))]
    steps += [("data", chunk(p)) for p in pieces]
    steps.append(("data", chunk(finish="stop")))
    if usage:
        steps.append(("data", usage_chunk(*usage)))
    if done:
        steps.append(("raw", b"data: [DONE]\n\n"))
    return steps


@dataclass
class Seen:
    """What the server saw of one request."""

    path: str
    body: dict[str, Any]
    disconnected_at: float | None = None
    finished: bool = False
    peer: Any = None   # the client's (host, port): the same for requests on one kept-alive connection
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ScriptedUpstream:
    scripts: list[list[tuple]] = field(default_factory=list)
    default: list[tuple] | None = None
    requests: list[Seen] = field(default_factory=list)
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    url: str = ""
    #: ``("mark", NAME)`` steps: ``time.monotonic()`` when the first request reached each (e.g. the first token)
    marks: dict[str, float] = field(default_factory=dict)

    def add(self, *steps: tuple) -> None:
        self.scripts.append(list(steps))

    async def __aenter__(self) -> "ScriptedUpstream":
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = await serve_locally(app, handler_cancellation=True)
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode(errors="replace")}
        seen = Seen(request.path, body)
        seen.peer = request.transport.get_extra_info("peername") if request.transport else None
        seen.headers = dict(request.headers)
        self.requests.append(seen)
        script = self.scripts.pop(0) if self.scripts else self.default
        if script is None:
            return web.json_response({"error": {"message": "no script left", "type": "test"}}, status=500)
        response: web.StreamResponse | None = None
        try:
            for step in script:
                kind = step[0]
                if kind == "status":  # ("status", code, json_body, headers?)
                    headers = step[3] if len(step) > 3 else None
                    return web.json_response(step[2], status=step[1], headers=headers)
                if kind == "json":  # a complete non-streaming answer
                    return web.json_response(step[1])
                if kind == "sleep":
                    await asyncio.sleep(step[1])
                    continue
                if kind == "mark":
                    self.marks.setdefault(step[1], time.monotonic())
                    continue
                if kind == "until":  # ("until", condition): hold the answer until condition() is true (10 s at most)
                    async with asyncio.timeout(10):
                        while not step[1]():
                            await asyncio.sleep(0.005)
                    continue
                if response is None:
                    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                                           "Cache-Control": "no-cache"})
                    await response.prepare(request)
                if kind == "data":
                    payload = step[1] if isinstance(step[1], str) else json.dumps(step[1])
                    await response.write(f"data: {payload}\n\n".encode())
                elif kind == "event":  # ("event", type, data) for the Responses API
                    await response.write(f"event: {step[1]}\ndata: {json.dumps(step[2])}\n\n".encode())
                elif kind == "raw":
                    await response.write(step[1])
                elif kind == "drop":
                    assert request.transport is not None
                    request.transport.abort()
                    return response
                elif kind == "forever_events":  # Responses text deltas every step[1] s, numbered from step[2]
                    n = 0
                    while True:
                        data = {"type": "response.output_text.delta", "sequence_number": step[2] + n,
                                "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": f"tick{n} "}
                        await response.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())
                        n += 1
                        await asyncio.sleep(step[1])
                elif kind == "forever":  # a chunk every step[1] seconds until the client goes away
                    n = 0
                    while True:
                        await response.write(f"data: {json.dumps(chunk(f'tick{n} '))}\n\n".encode())
                        n += 1
                        await asyncio.sleep(step[1])
                else:
                    raise AssertionError(f"unknown step {kind}")
            if response is None:
                response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
                await response.prepare(request)
            await response.write_eof()
            seen.finished = True
            return response
        except (ConnectionResetError, asyncio.CancelledError):
            seen.disconnected_at = time.monotonic()
            self.disconnected.set()
            raise
