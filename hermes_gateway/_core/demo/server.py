"""``hermes-gateway demo-llm``: the demo model served over real HTTP with aiohttp.

Tests and benchmarks point the real ``openai`` SDK at this server, so the
agent is exercised against a genuine socket, SSE framing and all.
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator

from aiohttp import web

from .endpoint import DemoEndpoint


#: Set on a request whose client hung up mid-stream (a test's recording middleware tells it from a completed one).
CLIENT_WENT_AWAY: Any = web.RequestKey("client_went_away", bool) if hasattr(web, "RequestKey") else "client_went_away"


def make_app(tokens_per_second: float = 30.0) -> web.Application:
    """An aiohttp application serving the demo model under ``/v1``."""
    endpoint = DemoEndpoint(tokens_per_second)

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        result = await endpoint.handle(request.method, request.path, body)
        if not result.streaming:
            assert isinstance(result.body, bytes)
            return web.Response(status=result.status, body=result.body, headers=result.headers)
        response = web.StreamResponse(status=result.status, headers=result.headers)
        await response.prepare(request)
        try:
            async for frame in result.body:  # type: ignore[union-attr]
                await response.write(frame)
            await response.write_eof()
        except ConnectionResetError:  # the client went away: an ordinary end of a stream, not an error to log
            request[CLIENT_WENT_AWAY] = True
        return response

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


@contextlib.asynccontextmanager
async def serve(host: str = "127.0.0.1", port: int = 0, tokens_per_second: float = 30.0) -> AsyncIterator[str]:
    """Run the demo server for the duration of the block; yields its base URL (``http://host:port/v1``)."""
    runner = web.AppRunner(make_app(tokens_per_second), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    try:
        addresses = runner.addresses  # the bound (host, port, ...) of each listening socket
        bound = addresses[0][1] if addresses else port
        yield f"http://{host}:{bound}/v1"
    finally:
        await runner.cleanup()
