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
