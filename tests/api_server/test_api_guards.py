"""Who may call the API (issue 13): a rebound DNS name and a browser page are refused on a keyless
loopback server; programs and listed browser origins are served."""

from __future__ import annotations

import json

import aiohttp
import pytest

from api_helpers import MODEL, gateway_config, running_gateway
from hermes_gateway._core.http.guards import loopback_host

CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "echo: hi"}], "stream": False}


async def call(url: str, path: str, headers: dict, body: dict | None = None) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as s:
        method = s.post if body is not None else s.get
        async with method(f"{url}{path}", json=body, headers=headers) as r:
            return r.status, await r.json()


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8642", "192.168.1.5:8642", "localhost.evil.example"])
async def test_without_keys_a_rebound_host_is_refused(gateway, host):
    for path, body in (("/v1/chat/completions", CHAT), ("/v1/models", None), ("/metrics", None)):
        async with aiohttp.ClientSession() as s:
            method = s.post if body is not None else s.get
            async with method(f"{gateway.url}{path}", json=body, headers={"Host": host}) as r:
                assert r.status == 403, path
                if path != "/metrics":
                    assert (await r.json())["error"]["code"] == "host_not_allowed"


@pytest.mark.parametrize("host", ["localhost", "localhost:8642", "127.0.0.1:1", "[::1]:8642", "LOCALHOST.",
                                  "app.localhost:3000"])
async def test_without_keys_loopback_hosts_are_served(gateway, host):
    status, body = await call(gateway.url, "/v1/chat/completions", {"Host": host}, CHAT)
    assert status == 200 and body["choices"][0]["message"]["content"] == "hi"


async def test_with_keys_any_host_is_served_with_the_key():
    async with running_gateway(gateway_config(api={"api_keys": ["k1"]})) as gw:
        status, _ = await call(gw.url, "/v1/models", {"Host": "gateway.lan", "Authorization": "Bearer k1"})
        assert status == 200


async def test_a_browser_page_is_refused_unless_its_origin_is_listed():
    async with running_gateway(gateway_config(api={"cors_origins": ["https://chat.example"]})) as gw:
        status, body = await call(gw.url, "/v1/chat/completions", {"Origin": "https://evil.example"}, CHAT)
        assert status == 403 and body["error"]["code"] == "origin_not_allowed"
        status, body = await call(gw.url, "/v1/chat/completions", {"Origin": "null"}, CHAT)
        assert status == 403
        status, body = await call(gw.url, "/v1/chat/completions", {"Origin": "https://chat.example"}, CHAT)
        assert status == 200


async def test_a_text_plain_post_from_a_page_gets_nothing(gateway):
    """The no-preflight trick: a page POSTs text/plain. Refused for the Origin and the Content-Type alike."""
    async with aiohttp.ClientSession() as s:
        for headers in ({"Content-Type": "text/plain"},
                        {"Content-Type": "text/plain", "Origin": "https://evil.example"}):
            async with s.post(f"{gateway.url}/v1/chat/completions", data=json.dumps(CHAT),
                              headers=headers) as r:
                assert r.status in (403, 415)
                assert "choices" not in await r.json()


def test_loopback_host_parsing():
    assert loopback_host("127.0.0.2:80") and loopback_host("[::1]") and loopback_host("localhost")
    assert not loopback_host("") and not loopback_host("[::1") and not loopback_host("0.0.0.0:1")
    assert not loopback_host("127.0.0.1.evil.example")
