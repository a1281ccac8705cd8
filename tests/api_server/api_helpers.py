"""Helpers for the API server tests: a real gateway on an ephemeral port, a scripted upstream, raw SSE.

The agent is always the real ``AIAgent``. Its upstream is either the
built-in demo model or a :class:`ScriptedUpstream` — a small aiohttp server
speaking OpenAI's Chat Completions wire format whose behaviour each test
scripts (slow first token, a stream cut in the middle, a hang), and which
records when its client hangs up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable

import aiohttp
from aiohttp import web

from hermes_gateway._core.api_server.plugin import api_server_of
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins

MODEL = "hermes-gateway"


def gateway_config(extra: dict | None = None, *, api: dict | None = None, model: dict | None = None) -> Any:
    """A config for tests: ephemeral port, fast keep-alive, the demo model at full speed unless overridden."""
    data: dict[str, Any] = {"api_server": {"port": 0, "keepalive_interval": 5.0, **(api or {})},
                            "model": model or {"demo": {"tokens_per_second": 0}}}
    data.update(extra or {})
    return parse_config(data, env={})


@contextlib.asynccontextmanager
async def running_gateway(config: Any, extra: list | None = None) -> AsyncIterator[Gateway]:
    gateway = Gateway(config, make_plugins(load_entry_points=False, extra=extra or []), shutdown_grace=2.0)
    async with gateway:
        yield gateway


def api(gateway: Gateway):
    server = api_server_of(gateway.app)
    assert server is not None
    return server


# -- raw SSE ---------------------------------------------------------------------------------------------------

@dataclass
class SSEEvent:
    event: str | None
    data: str
    comments: list[str] = field(default_factory=list)

    def json(self) -> Any:
        return json.loads(self.data)


def parse_sse(raw: bytes) -> list[SSEEvent | str]:
    """Split a whole SSE body into events and comment lines (kept, in order, as ``str``)."""
    text = raw.decode("utf-8")
    assert text.endswith("\n\n"), f"the stream must end at a frame boundary: {text[-80:]!r}"
    out: list[SSEEvent | str] = []
    for block in text.split("\n\n")[:-1]:
        event, data = None, []
        for line in block.split("\n"):
            if line.startswith(":"):
                out.append(line)
            elif line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: "):
                data.append(line[len("data: "):])
            else:
                raise AssertionError(f"unexpected SSE line {line!r}")
        if data:
            out.append(SSEEvent(event, "\n".join(data)))
        else:
            assert event is None, "an event: line without data: crashes the Python SDK"
    return out


async def post_raw(url: str, body: Any, *, headers: dict | None = None) -> tuple[int, dict, bytes]:
    async with aiohttp.ClientSession() as session:
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        async with session.post(url, data=data, headers={"Content-Type": "application/json", **(headers or {})}) as r:
            return r.status, dict(r.headers), await r.read()


# -- a scripted upstream ---------------------------------------------------------------------------------------

class UpstreamStream:
    """What a script uses to answer one streaming request, chunk by chunk."""

    def __init__(self, response: web.StreamResponse, model: str) -> None:
        self.response = response
        self.model = model
        self.id = f"chatcmpl-up{int(time.time() * 1e6)}"

    def _chunk(self, delta: dict, finish: str | None = None) -> bytes:
        body = {"id": self.id, "object": "chat.completion.chunk", "created": 0, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    async def role(self) -> None:
        await self.response.write(self._chunk({"role": "assistant", "content": ""}))

    async def text(self, text: str) -> None:
        await self.response.write(self._chunk({"content": text}))

    async def finish(self) -> None:
        await self.response.write(self._chunk({}, "stop") + b"data: [DONE]\n\n")

    def cut(self) -> None:
        """Drop the connection mid-body, as a crashing upstream would."""
        transport = self.response._req.transport if self.response._req else None  # type: ignore[attr-defined]
        if transport is not None:
            transport.close()


Script = Callable[[dict, UpstreamStream], Awaitable[None]]
NonStreamScript = Callable[[dict], Awaitable[web.Response]]


class ScriptedUpstream:
    """An OpenAI-compatible upstream whose every reply a test writes by hand."""

    def __init__(self) -> None:
        self.reply: Callable[[dict], str] | None = None  # both paths: the whole text (streamed word by word)
        self.stream_script: Script | None = None
        self.nonstream_script: NonStreamScript | None = None
        self.stream_refusal: Callable[[dict], web.Response | None] | None = None  # answer a stream request with this
        self.requests: list[dict] = []
        self.hung_up = asyncio.Event()       # set when a client closed a stream before it ended
        self.open_streams = 0
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def __aenter__(self) -> "ScriptedUpstream":
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        if not body.get("stream"):
            if self.nonstream_script is not None:
                return await self.nonstream_script(body)
            if self.reply is not None:
                return chat_completion_json(self.reply(body))
            return web.json_response({"error": {"message": "not scripted", "type": "invalid_request_error",
                                                "param": None, "code": None}}, status=400)
        refusal = self.stream_refusal(body) if self.stream_refusal is not None else None
        if refusal is not None:
            return refusal
        script = self.stream_script or (_words(self.reply) if self.reply is not None else None)
        assert script is not None, "the test did not script a streaming reply"
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        self.open_streams += 1
        try:
            await script(body, UpstreamStream(response, body.get("model", "m")))
        except (asyncio.CancelledError, ConnectionError):
            self.hung_up.set()
            raise
        finally:
            self.open_streams -= 1
        return response

    def model_config(self, **extra: Any) -> dict:
        return {"base_url": self.url, "api_key": "sk-upstream-secret", "name": "scripted", **extra}


def _words(reply: Callable[[dict], str]) -> Script:
    async def script(body: dict, s: UpstreamStream) -> None:
        await s.role()
        for word in re.findall(r"\s*\S+|\s+", reply(body)):
            await s.text(word)
        await s.finish()
    return script


def chat_completion_json(text: str, model: str = "scripted") -> web.Response:
    return web.json_response({
        "id": "chatcmpl-nonstream", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})


async def metric(gateway: Gateway, name: str) -> float:
    """One sample from GET /metrics, read over HTTP like Prometheus would."""
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{gateway.url}/metrics") as r:
            text = await r.text()
    for line in text.splitlines():
        sample, _, value = line.rpartition(" ")
        if sample == name:
            return float(value)
    return 0.0  # a labelled counter not seen yet


async def eventually(check: Callable[[], Any], within: float = 1.0, what: str = "") -> float:
    """Wait until ``check()`` is truthy (a "does not hang" bound, not a speed claim); return the time taken."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > within:
            raise AssertionError(f"not within {within}s: {what}")
        await asyncio.sleep(0.01)
    return time.monotonic() - start
