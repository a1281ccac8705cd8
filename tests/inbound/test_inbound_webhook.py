"""A webhook platform: the HTTP request is answered at once, the reply follows, a retried delivery is answered once."""

from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web

from hermes_gateway import Incoming, hookimpl
from hermes_gateway._core.config import parse_config
from hermes_gateway import PluginHost
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from inbound_helpers import reference


class Webhooks:
    """The inbound half of a webhook platform: translate the body into an Incoming, hand it in, answer 200."""

    def __init__(self) -> None:
        self.replies: list[asyncio.Future] = []

    @hookimpl
    def register_routes(self, app: web.Application, host: PluginHost) -> None:
        async def receive(request: web.Request) -> web.Response:
            body = await request.json()
            self.replies.append(host.receive(Incoming("reference", body["chat"], body["text"],
                                                         update_id=body["id"])))
            return web.json_response({"ok": True})
        app.router.add_post("/webhooks/reference", receive)


async def test_the_webhook_is_answered_before_the_model_runs_and_a_retry_is_answered_once():
    ref, hooks = reference(), Webhooks()
    config = parse_config({
        "model": {"demo": {"tokens_per_second": 5}},  # a slow model: the reply takes seconds
        "streaming": {"reference": {"enabled": True, "edit_interval": 0.1, "min_tokens": 1}},
        "platforms": {"reference": {"enabled": True}},
        "api_server": {"port": 0, "enabled": False},
    }, env={})
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref, hooks])
    async with Gateway(config, plugins) as gateway:
        async with aiohttp.ClientSession() as http:
            for _ in range(2):  # the platform did not hear our 200 in time and delivers again
                async with http.post(f"{gateway.url}/webhooks/reference",
                                     json={"id": "evt-1", "chat": "5", "text": "echo: one two three four"}) as resp:
                    assert resp.status == 200 and await resp.json() == {"ok": True}
                    assert not hooks.replies[0].done(), "the 200 came before the reply was written"
        first, second = await asyncio.gather(*hooks.replies)
    assert first.delivered and second is None
    assert ref.chat("5").screen == ["one two three four"]
