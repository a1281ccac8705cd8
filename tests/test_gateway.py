"""The gateway's lifecycle: routes, hooks and platforms start in order and stop in reverse."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import aiohttp
import pytest
from aiohttp import web

from hermes_gateway import Platform, PlatformClient, PlatformContext, hookimpl, secret
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.errors import ConfigError
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins


class Recorder:
    """A plugin with one platform, a webhook route and both lifecycle hooks."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def register_platforms(self, register):
        calls = self.calls

        @dataclass
        class ChattySettings:
            token: str = secret()

        class Chatty(PlatformClient):
            def __init__(self, settings, context):
                assert isinstance(context, PlatformContext) and settings.token == "t"
                calls.append("client:chatty")

            async def start(self):
                calls.append("start:chatty")

            def stop(self):
                calls.append("stop:chatty")

            async def close(self):
                calls.append("close:chatty")

        register(Platform(name="chatty", settings=ChattySettings, client=Chatty))
        register(Platform(name="dormant", client=lambda settings, context: calls.append("client:dormant")))

    @hookimpl
    def on_stream_end(self, stream, message, text):  # a platform plugin must show final texts
        return message

    @hookimpl
    def register_routes(self, app, host):
        assert host.config is not None
        async def hook(request):
            return web.json_response({"got": (await request.json())["x"]})
        app.router.add_post("/webhooks/chatty", hook)
        self.calls.append("routes")

    @hookimpl
    async def startup(self, gateway):
        await asyncio.sleep(0)
        self.calls.append("startup")

    @hookimpl
    def shutdown(self, gateway):
        async def later():
            self.calls.append("shutdown")
        return later()


def config(**api):
    return parse_config({"api_server": {"port": 0, **api}, "platforms": {"chatty": {"token": "t"},
                                                                         "dormant": {"enabled": False}}}, env={})


async def test_start_order_routes_served_and_stop_in_reverse():
    rec = Recorder()
    plugins = make_plugins(load_entry_points=False, extra=[rec])
    async with Gateway(config(), plugins) as gw:
        assert rec.calls == ["routes", "startup", "client:chatty", "start:chatty"]
        assert gw.started_platforms == ["web", "chatty"]  # the web console's chat (a built-in) comes first
        async with aiohttp.ClientSession() as s:
            async with s.post(f"{gw.url}/webhooks/chatty", json={"x": 7}) as r:
                assert (await r.json()) == {"got": 7}
            async with s.get(f"{gw.url}/health") as r:  # the API server plugin shares the same app
                assert r.status == 200
    assert rec.calls[4:] == ["stop:chatty", "shutdown", "close:chatty"]
    assert gw.url is None


async def test_api_server_disabled_leaves_only_plugin_routes():
    rec = Recorder()
    async with Gateway(config(enabled=False), make_plugins(load_entry_points=False, extra=[rec])) as gw:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{gw.url}/v1/models") as r:
                assert r.status == 404


async def test_nothing_to_serve_means_no_listener():
    cfg = parse_config({"api_server": {"enabled": False, "port": 0}}, env={})
    async with Gateway(cfg, make_plugins(load_entry_points=False)) as gw:
        assert gw.url is None


async def test_unsafe_bind_refuses_to_start_and_leaves_nothing_running():
    rec = Recorder()
    with pytest.raises(ConfigError, match="allow_unauthenticated"):
        async with Gateway(config(host="0.0.0.0"), make_plugins(load_entry_points=False, extra=[rec])):
            pass
    assert "start:chatty" not in rec.calls


async def test_webhook_finishes_after_its_sender_hangs_up_but_marked_handlers_are_cancelled():
    from hermes_gateway._core.http.disconnect import cancel_on_disconnect

    release = asyncio.Event()
    outcomes: list[str] = []

    class Hooks:
        @hookimpl
        def register_routes(self, app):
            async def webhook(request):
                await release.wait()
                outcomes.append("webhook finished")
                return web.Response(text="ok")

            @cancel_on_disconnect
            async def stream(request):
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    outcomes.append("stream cancelled")
                    raise
            app.router.add_post("/webhook", webhook)
            app.router.add_post("/stream", stream)

    async with Gateway(config(), make_plugins(load_entry_points=False, extra=[Hooks()])) as gw:
        for path in ("/webhook", "/stream"):
            async with aiohttp.ClientSession() as s:
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(s.post(f"{gw.url}{path}", data=b"x"), 0.3)  # the sender hangs up
        for _ in range(200):
            if "stream cancelled" in outcomes:
                break
            await asyncio.sleep(0.01)
        release.set()
        for _ in range(200):
            if "webhook finished" in outcomes:
                break
            await asyncio.sleep(0.01)
    assert sorted(outcomes) == ["stream cancelled", "webhook finished"]


async def test_a_platform_that_cannot_start_stops_what_started_and_says_which():
    from hermes_gateway._core.gateway import StartError

    stopped = []

    class Broken:
        @hookimpl
        def register_platforms(self, register):
            class First(PlatformClient):
                async def stop(self):
                    stopped.append("first")

            class Second(PlatformClient):
                async def start(self):
                    raise RuntimeError("bad token")

            register(Platform(name="first", client=First))
            register(Platform(name="second", client=Second))

        @hookimpl
        def on_stream_end(self, stream, message, text):
            return message

    cfg = parse_config({"api_server": {"port": 0}, "platforms": {"first": True, "second": True}}, env={})
    gw = Gateway(cfg, make_plugins(load_entry_points=False, extra=[Broken()]))
    with pytest.raises(StartError, match="platform second .* failed to start: RuntimeError: bad token"):
        await gw.start()
    assert stopped == ["first"] and gw.url is None


class Quiet:
    """A platform plugin whose startup fails, as one whose token is missing would."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__name__ = f"quiet_{name}"
        self.started = 0

    @hookimpl
    def register_platforms(self, register):
        register(Platform(name=self.name))

    @hookimpl
    def on_stream_end(self, stream, message, text):  # a platform plugin must show final texts
        return message

    @hookimpl
    def startup(self, gateway):
        self.started += 1
        raise RuntimeError("no token configured")

    @hookimpl
    def shutdown(self, gateway):
        self.started -= 100


async def test_a_plugin_whose_platform_is_disabled_does_nothing_at_start_up():
    quiet = Quiet("mattermost")  # installed, not enabled in the config
    cfg = parse_config({"api_server": {"enabled": False}}, env={})
    async with Gateway(cfg, make_plugins(load_entry_points=False, extra=[quiet])) as gw:
        assert gw.started_platforms == []
    assert quiet.started == 0, "neither startup nor shutdown ran for a disabled platform"


async def test_a_plugin_failing_at_start_up_is_named_in_one_line_when_its_platform_is_enabled():
    from hermes_gateway._core.gateway import StartError

    quiet = Quiet("mattermost")
    cfg = parse_config({"api_server": {"enabled": False}, "platforms": {"mattermost": True}}, env={})
    with pytest.raises(StartError) as caught:
        async with Gateway(cfg, make_plugins(load_entry_points=False, extra=[quiet])):
            pass
    assert str(caught.value) == "plugin quiet_mattermost failed to start: RuntimeError: no token configured"


async def test_bad_access_keys_stop_start_up_naming_the_key():
    cfg = parse_config({"api_server": {"enabled": False},
                        "platforms": {"reference": {"allowed_users": ["ada", {"id": 1}]}}}, env={})
    with pytest.raises(ConfigError) as caught:
        async with Gateway(cfg, make_plugins(load_entry_points=False)):
            pass
    assert str(caught.value).startswith("(inline): platforms.reference.allowed_users[1]: an id")
