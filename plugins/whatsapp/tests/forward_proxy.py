"""A small HTTP forward proxy on 127.0.0.1 for the tests: counts what passes through it and forwards it."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web

_HOP = {"host", "connection", "proxy-connection", "proxy-authorization", "keep-alive", "transfer-encoding",
        "content-length", "te", "upgrade"}


class ForwardProxy:
    """``async with ForwardProxy() as proxy``: ``proxy.url`` to put in HTTP_PROXY; ``proxy.seen``: the URLs
    that went through it. Plain http only (what the emulators speak), no CONNECT."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.url = ""
        self._runner: web.ServerRunner | None = None

    async def __aenter__(self) -> "ForwardProxy":
        self._runner = web.ServerRunner(web.Server(self._forward))
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _forward(self, request: web.BaseRequest) -> web.StreamResponse:
        target = str(request.url)  # a proxy is sent the absolute URL (GET http://host:port/path HTTP/1.1)
        self.seen.append(target)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        async with aiohttp.ClientSession(auto_decompress=False) as session:
            async with session.request(request.method, target, headers=headers, data=await request.read(),
                                       allow_redirects=False) as answer:
                body = await answer.read()
                kept = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP}
                return web.Response(status=answer.status, body=body, headers=kept)
