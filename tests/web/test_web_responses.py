"""The console's live feeds open the same way: an event stream, the reconnect delay first, the page's headers."""

from __future__ import annotations

import aiohttp
from aiohttp import web

from hermes_gateway._core.web.responses import CSP, PING, open_event_stream
from hermes_gateway.testing import serve_locally


async def test_a_feed_starts_with_its_reconnect_delay_and_carries_the_console_headers():
    async def feed(request: web.Request) -> web.StreamResponse:
        response = await open_event_stream(request, retry_ms=1500)
        await response.write(PING)
        return response

    app = web.Application()
    app.router.add_get("/feed", feed)
    runner = await serve_locally(app)
    try:
        port = runner.addresses[0][1]
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/feed") as r:
            assert r.headers["Content-Type"] == "text/event-stream"
            assert r.headers["X-Accel-Buffering"] == "no" and r.headers["Content-Security-Policy"] == CSP
            assert r.headers["Cache-Control"] == "no-store"
            assert await r.read() == b"retry: 1500\n\n: ping\n\n"
    finally:
        await runner.cleanup()


async def test_a_json_body_sent_in_pieces_is_read_whole_and_one_too_large_is_still_refused():
    import asyncio

    from hermes_gateway._core.web.responses import json_ok, read_json

    async def echo(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, 64)
        return body if isinstance(body, web.Response) else json_ok(body)

    async def pieces(*parts: bytes):
        for part in parts:
            yield part
            await asyncio.sleep(0)  # each piece its own chunk on the wire

    app = web.Application()
    app.router.add_post("/echo", echo)
    runner = await serve_locally(app)
    try:
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/echo"
        async with aiohttp.ClientSession() as session:
            async with session.post(url, data=pieces(b'{"secret": ', b'"abc', b'"}')) as r:
                assert r.status == 200 and await r.json() == {"secret": "abc"}
            async with session.post(url, data=pieces(b'{"secret": "', b"x" * 40, b"y" * 40, b'"}')) as r:
                assert r.status == 413
    finally:
        await runner.cleanup()
