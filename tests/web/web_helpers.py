"""Helpers for the web console tests: a gateway with the console, a signed-in HTTP session, a fake peer.

``console_app`` mounts the console on an app of its own, behind a middleware
that makes every request look as if it came from ``peer`` — how the tests
see what a browser on another machine gets without a second machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, AsyncIterator

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.web.plugin import mount

OUTSIDE = "203.0.113.7"  # TEST-NET-3: an address that is never this machine


def config(web_section: dict | None = None, *, api: dict | None = None, tokens_per_second: float = 0,
           store: dict | None = None, **extra: Any) -> Any:
    data: dict[str, Any] = {"api_server": {"port": 0, **(api or {})},
                            "model": {"demo": {"tokens_per_second": tokens_per_second}},
                            "store": store or {"path": ":memory:"}}
    if web_section is not None:
        data["web"] = web_section
    data.update(extra)
    return parse_config(data, env={})


@contextlib.asynccontextmanager
async def running(cfg: Any) -> AsyncIterator[Gateway]:
    gateway = Gateway(cfg, make_plugins(load_entry_points=False), shutdown_grace=2.0)
    async with gateway:
        yield gateway


def fake_peer(peer: str) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
        return await handler(request.clone(remote=peer))
    return middleware


@contextlib.asynccontextmanager
async def console_app(cfg: Any, *, peer: str = OUTSIDE) -> AsyncIterator[TestClient]:
    """The console's routes alone (no platform running), every request seen as coming from ``peer``."""
    app = web.Application(middlewares=[fake_peer(peer)])
    mount(app, Gateway(cfg, make_plugins(load_entry_points=False)).console_sources)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        yield client


def browser_session() -> aiohttp.ClientSession:
    """Keeps cookies for 127.0.0.1 (aiohttp's default jar ignores cookies of IP hosts)."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def csrf_of(session: aiohttp.ClientSession, url: str) -> str:
    async with session.get(f"{url}/ui/api/session") as r:
        assert r.status == 200, await r.text()
        return (await r.json())["csrf"]


class Feed:
    """The chat's SSE feed as the browser reads it: each event's JSON, in order, as it arrives."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response
        self.events: list[dict[str, Any]] = []
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for raw in self.response.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                self.events.append(json.loads(line[len("data: "):]))

    async def until(self, predicate: Any, timeout: float = 30.0) -> list[dict[str, Any]]:
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate(self.events):
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"not seen in {timeout} s; events: {self.events[-10:]}")
            await asyncio.sleep(0.02)
        return self.events

    def close(self) -> None:
        self.task.cancel()
        self.response.close()


async def open_feed(session: aiohttp.ClientSession, url: str) -> Feed:
    response = await session.get(f"{url}/ui/api/chat/events")
    assert response.status == 200 and response.headers["Content-Type"].startswith("text/event-stream")
    return Feed(response)
