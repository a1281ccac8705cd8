"""A webhook's body must arrive within the deadline: a sender that stalls gets a 408, the handler never runs."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web

from hermes_gateway._core.http import body_deadline
from hermes_gateway._core.http.body_deadline import webhook_body_deadline
from hermes_gateway.testing import serve_locally


@pytest.fixture
async def listener(monkeypatch):
    monkeypatch.setattr(body_deadline, "BODY_SECONDS", 0.3)
    handled: list[bytes] = []

    async def handler(request: web.Request) -> web.Response:
        handled.append(await request.read())
        return web.Response(text="ok")

    app = web.Application(middlewares=[webhook_body_deadline], client_max_size=1000)
    app.router.add_post("/webhooks/acme", handler)
    app.router.add_post("/v1/other", handler)
    runner = await serve_locally(app)
    yield runner.addresses[0][1], handled
    await runner.cleanup()


async def exchange(port: int, request: bytes, within: float = 3) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    try:
        return await asyncio.wait_for(reader.read(), within)  # until the server closes
    finally:
        writer.close()


def post(path: str, body: bytes, length: int | None = None) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n\r\n").encode() + body


async def test_a_body_that_never_comes_is_a_408_and_the_handler_never_runs(listener):
    port, handled = listener
    answer = await exchange(port, post("/webhooks/acme", b'{"half": ', length=100))
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert json.loads(body)["error"]["code"] == "request_timeout"
    assert handled == []  # and the connection was closed at once (exchange reads until it is)


async def test_a_whole_body_reaches_the_handler_once_read(listener):
    port, handled = listener
    answer = await exchange(port, post("/webhooks/acme", b'{"whole": true}'))
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok")
    assert handled == [b'{"whole": true}']


async def test_the_size_cap_still_comes_first(listener):
    port, handled = listener
    answer = await exchange(port, post("/webhooks/acme", b"x" * 2000))
    assert answer.startswith(b"HTTP/1.1 413") and handled == []


async def test_other_routes_keep_their_own_reading(listener):
    """Only the platforms' webhooks: the API server reads (and times) its bodies itself."""
    port, handled = listener
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(post("/v1/other", b'{"half": ', length=len(b'{"half": "rest of it"}')))
    await asyncio.sleep(0.6)
    assert handled == [], "the handler is still reading, past the webhook deadline"
    writer.write(b'"rest of it"}')
    answer = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200") and handled == [b'{"half": "rest of it"}']
