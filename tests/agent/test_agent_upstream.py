"""Upstream bookkeeping: which upstreams do not stream is remembered per upstream, for a while."""

from __future__ import annotations

import time

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.upstream import StreamSupport
from hermes_gateway._core.config import Endpoint

from scripted_upstream import model_config


def test_memory_is_per_upstream_and_expires() -> None:
    support = StreamSupport(ttl=0.05)
    a, b = ("http://a/v1", "m"), ("http://b/v1", "m")
    support.mark_not_streaming(a)
    support.mark_no_usage_option(b)
    assert not support.streams(a) and support.streams(b)
    assert support.takes_usage_option(a) and not support.takes_usage_option(b)
    time.sleep(0.06)
    assert support.streams(a) and support.takes_usage_option(b)


async def test_labels_name_the_model_and_url_but_never_the_key() -> None:
    config = model_config("http://127.0.0.1:1/v1", api_key="sk-very-secret",
                          fallback=[{"base_url": "http://127.0.0.1:2/v1", "name": "backup"}])
    agent = AIAgent.from_config(config, tools=[])
    upstreams = agent._pool.all()
    assert [u.label for u in upstreams] == ["test-model at http://127.0.0.1:1/v1", "backup at http://127.0.0.1:2/v1"]
    assert upstreams[1].endpoint.api_key == "sk-very-secret"  # fallbacks inherit the primary's key
    assert "sk-very-secret" not in repr(upstreams[0].endpoint)
    assert AIAgent.from_config(model_config(), tools=[])._pool.all()[0].label == "demo at the built-in demo model"
    await agent.aclose()


def test_endpoint_repr_hides_the_key() -> None:
    assert "secret" not in repr(Endpoint(base_url="http://x", api_key="secret"))


def test_the_aiohttp_transport_is_used_unless_the_url_has_credentials_or_a_proxy_is_set(monkeypatch):
    from hermes_gateway._core.agent.upstream import fast_transport_suits

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert fast_transport_suits("http://127.0.0.1:8000/v1")
    assert not fast_transport_suits("http://alice:secret@127.0.0.1:8000/v1")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.lan:3128")
    assert not fast_transport_suits("https://api.example/v1")
