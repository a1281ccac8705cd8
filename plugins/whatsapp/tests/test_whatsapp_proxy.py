"""HTTPS_PROXY / HTTP_PROXY / NO_PROXY: the Graph API calls go through the proxy the environment names, as the
model's requests do, and a host NO_PROXY names is reached directly."""

from __future__ import annotations

import pytest

from forward_proxy import ForwardProxy
from whatsapp_test_support import USER, plugin_for

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
                   "all_proxy", "no_proxy")


@pytest.fixture
def clean_proxy_env(monkeypatch):
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


async def test_graph_calls_go_through_the_proxy_of_the_environment(meta, clean_proxy_env):
    async with ForwardProxy() as proxy:
        clean_proxy_env.setenv("HTTP_PROXY", proxy.url)
        clean_proxy_env.setenv("HTTPS_PROXY", proxy.url)
        client = plugin_for(meta, pair_wait=0)
        try:
            await client.graph.send_text(USER, "through the proxy")
        finally:
            await client.close()
    assert meta.screen(USER) == ["through the proxy"]
    assert any(url.startswith(meta.base_url) and url.endswith("/messages") for url in proxy.seen), proxy.seen


async def test_no_proxy_reaches_the_host_directly(meta, clean_proxy_env):
    async with ForwardProxy() as proxy:
        clean_proxy_env.setenv("HTTP_PROXY", proxy.url)
        clean_proxy_env.setenv("NO_PROXY", "127.0.0.1")
        client = plugin_for(meta, pair_wait=0)
        try:
            await client.graph.send_text(USER, "straight there")
        finally:
            await client.close()
    assert meta.screen(USER) == ["straight there"]
    assert proxy.seen == []
