"""Feature hooks get a narrow, typed host (``hermes_gateway.PluginHost``), never the gateway; a plugin written
against the old ``gateway`` argument still loads and works, with a DeprecationWarning."""

from __future__ import annotations

import warnings

import aiohttp
import pytest
from aiohttp import web

from hermes_gateway import Command, Incoming, PluginHost, hookimpl
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway.testing import ReferencePlatform


class Bridge:
    """A webhook bridge written against the host: POST /bridge {"chat", "text"} becomes a message."""

    __name__ = "bridge"

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def register_routes(self, app, host):
        assert isinstance(host, PluginHost)

        async def post(request):
            if not host.accepting():
                return web.Response(status=503)
            body = await request.json()
            host.receive(Incoming("reference", body["chat"], body["text"]))
            return web.Response(status=202)

        app.router.add_post("/bridge", post)

    @hookimpl
    def startup(self, host):
        self.seen.append(f"startup grace={host.shutdown_grace} api={host.config.api_server.enabled}")

    @hookimpl
    def shutdown(self, host):
        self.seen.append(f"shutdown url={host.url() is not None}")


class OldBridge:
    """The same, written against the deprecated ``gateway`` argument."""

    __name__ = "old_bridge"

    def __init__(self) -> None:
        self.started = False

    @hookimpl
    def startup(self, gateway):
        self.started = gateway.config is not None


def config():
    return parse_config({"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {}},
                         "api_server": {"port": 0, "host": "127.0.0.1"}, "conversation": {"shutdown_grace": 2}},
                        env={})


async def test_a_feature_plugin_receives_through_the_host_and_sees_its_config():
    ref, bridge = ReferencePlatform(), Bridge()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        plugins = make_plugins(builtins=("hermes_gateway._core.api_server.plugin",), load_entry_points=False,
                               extra=[ref, bridge])
    async with Gateway(config(), plugins) as gateway:
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{gateway.url}/bridge", json={"chat": "5", "text": "echo: from outside"}) as r:
                assert r.status == 202
        for _ in range(500):
            if ref.chat("5").screen:
                break
            await __import__("asyncio").sleep(0.01)
    assert ref.chat("5").screen == ["from outside"]
    assert bridge.seen == ["startup grace=2.0 api=True", "shutdown url=True"]


async def test_a_plugin_asking_for_the_gateway_loads_with_a_deprecation_warning_and_still_starts():
    old = OldBridge()
    with pytest.warns(DeprecationWarning, match=r"plugin old_bridge: startup\(gateway\) is deprecated: take `host`"):
        plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ReferencePlatform(), old])
    async with Gateway(config(), plugins):
        pass
    assert old.started


async def test_a_command_reading_ctx_gateway_works_with_a_deprecation_warning():
    ref = ReferencePlatform()
    answers: list[str] = []

    async def where(ctx):
        answers.append(str(ctx.config.conversation.shutdown_grace))
        with pytest.warns(DeprecationWarning, match="CommandContext.gateway is deprecated"):
            return f"grace {ctx.gateway.config.conversation.shutdown_grace}"

    class Commands:
        __name__ = "where"

        @hookimpl
        def register_commands(self, register):
            register(Command("where", "where am I", where))

    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref, Commands()])
    async with Gateway(config(), plugins):
        await ref.say("9", "/where")
    assert answers == ["2.0"] and ref.chat("9").screen == ["grace 2.0"]
