"""One gateway as one of several workers: worker 0 runs the platforms, the others serve HTTP only."""

from __future__ import annotations

from dataclasses import dataclass

import aiohttp
import pytest

from hermes_gateway import Media, Platform, PlatformClient, hookimpl
from hermes_gateway._core.api_server.plugin import api_server_of
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.errors import StartError
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.http.workers import WORKER_HEADER, WorkerSlot, bind_listeners
from hermes_gateway._core.plugins import make_plugins


class Pinger:
    """A platform plugin; with ``webhook`` its client mounts a route, as a webhook-mode platform does."""

    def __init__(self, webhook: bool = False) -> None:
        self.calls: list[str] = []
        self.webhook = webhook

    @hookimpl
    def register_platforms(self, register):
        calls, webhook = self.calls, self.webhook

        @dataclass
        class PingSettings:
            greeting: str = "hi"

        class Ping(PlatformClient):
            def __init__(self, settings, context):
                calls.append("client")
                if webhook:
                    context.add_route("POST", "/webhooks/ping", self.hook)

            async def hook(self, request):
                raise AssertionError("not called here")

            async def start(self):
                calls.append("start")

            async def stop(self):
                calls.append("stop")

        register(Platform(name="ping", settings=PingSettings, client=Ping))

    @hookimpl
    def on_stream_end(self, stream, message, text):
        return message

    @hookimpl
    async def startup(self, gateway):
        self.calls.append("startup")


def config(tmp_path):
    return parse_config({"api_server": {"port": 0, "workers": 2}, "platforms": {"ping": {}},
                         "store": {"path": str(tmp_path / "state.db")}, "media": {"directory": str(tmp_path / "media")},
                         "model": {"demo": {"tokens_per_second": 0}}}, env={})


async def get_health(url: str) -> tuple[int, str | None]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{url}/health") as response:
            return response.status, response.headers.get(WORKER_HEADER)


async def test_worker_zero_runs_the_platforms_and_the_others_only_serve(tmp_path):
    sockets = bind_listeners("127.0.0.1", 0, 2)
    first, second = Pinger(), Pinger()
    try:
        key = bytes(range(32))
        zero = Gateway(config(tmp_path), make_plugins(load_entry_points=False, extra=[first]),
                       worker=WorkerSlot(0, 2, sockets[0], media_key=key))
        one = Gateway(config(tmp_path), make_plugins(load_entry_points=False, extra=[second]),
                      worker=WorkerSlot(1, 2, sockets[1], media_key=key))
        async with zero, one:
            assert zero.started_platforms == ["ping"] and first.calls == ["startup", "client", "start"]
            assert one.started_platforms == [] and second.calls == []  # no client, no startup hook
            assert zero.url == one.url  # one address
            assert await get_health(str(zero.url)) in ((200, "0"), (200, "1"))
            media = tmp_path / "media" / "a.png"  # a reply's file, linked by one worker, served by the other
            media.parent.mkdir()
            media.write_bytes(b"\x89PNG")
            assert zero.app is not None and one.app is not None
            token = api_server_of(zero.app).media.add(Media(path=str(media)))
            assert api_server_of(one.app).media.get(token).filename == "a.png"
        assert first.calls[-1] == "stop"
    finally:
        for sock in sockets:
            sock.close()


async def test_a_single_gateway_names_no_worker(tmp_path):
    cfg = parse_config({"api_server": {"port": 0}, "store": {"path": str(tmp_path / "state.db")},
                        "model": {"demo": {"tokens_per_second": 0}}}, env={})
    async with Gateway(cfg, make_plugins(load_entry_points=False)) as gateway:
        assert await get_health(str(gateway.url)) == (200, None)


async def test_a_webhook_platform_stops_worker_zero_with_one_line(tmp_path):
    sockets = bind_listeners("127.0.0.1", 0, 2)
    pinger = Pinger(webhook=True)
    try:
        gateway = Gateway(config(tmp_path), make_plugins(load_entry_points=False, extra=[pinger]),
                          worker=WorkerSlot(0, 2, sockets[0]))
        with pytest.raises(StartError, match=r"platform ping receives by webhook.*coordination\.url"):
            await gateway.start()
        assert "start" not in pinger.calls and gateway.runner is None
    finally:
        for sock in sockets:
            sock.close()
