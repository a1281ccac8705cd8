"""Overload and one client's bad luck stay contained (issue 13): a cap on concurrent streams answering 429,
and an upstream's 400 for one request does not turn streaming off for everyone else."""

from __future__ import annotations


import aiohttp
import pytest
from aiohttp import web

from hermes_gateway._core.agent.upstream import STREAM_SUPPORT
from api_helpers import MODEL, eventually, gateway_config, parse_sse, post_raw, running_gateway, api

@pytest.fixture(autouse=True)
def forget_stream_support():
    """What an upstream cannot do is remembered process-wide; ports get reused by later tests."""
    yield
    STREAM_SUPPORT.forget()


STREAM = {"model": MODEL, "messages": [{"role": "user", "content": "hello"}], "stream": True}


async def test_beyond_max_concurrent_streams_a_429_with_retry_after_and_the_rest_unharmed():
    config = gateway_config(api={"max_concurrent_streams": 2}, model={"demo": {"tokens_per_second": 50}})
    async with running_gateway(config) as gw:
        async with aiohttp.ClientSession() as s:
            first = [await s.post(f"{gw.url}/v1/chat/completions", json=STREAM) for _ in range(2)]
            for r in first:
                assert r.status == 200
                await r.content.readany()
            async with s.post(f"{gw.url}/v1/responses", json={"model": MODEL, "input": "hi", "stream": True}) as r:
                assert r.status == 429 and r.headers["Retry-After"] == "1"
                assert (await r.json())["error"]["code"] == "too_many_streams"
            # a non-streaming request is not a stream: still served
            async with s.post(f"{gw.url}/v1/chat/completions", json={**STREAM, "stream": False,
                              "messages": [{"role": "user", "content": "echo: ok"}]}) as r:
                assert r.status == 200
            for r in first:
                assert parse_sse(await r.read())[-1].data == "[DONE]"
            await eventually(lambda: api(gw).metrics.active_streams == 0, 2, "streams closed")
            async with s.post(f"{gw.url}/v1/chat/completions", json=STREAM) as r:
                assert r.status == 200  # capacity is back
                await r.read()


def refuse_poison(body: dict) -> web.Response | None:
    if "poison" in str(body.get("messages")):
        return web.json_response({"error": {"message": "Invalid 'messages[0].content': unsupported bytes",
                                            "type": "invalid_request_error", "param": None, "code": None}},
                                 status=400)
    return None


async def test_an_upstream_400_for_one_request_leaves_streaming_on_for_the_others(upstream):
    upstream.reply = lambda body: "fine thanks"
    upstream.stream_refusal = refuse_poison
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions",
                                        {**STREAM, "messages": [{"role": "user", "content": "poison"}]})
        assert status == 400 and b"unsupported bytes" in raw  # the client's request, refused (issue 34)
        assert [r.get("stream") for r in upstream.requests] == [True]  # not replayed without streaming
        status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", STREAM)
        assert status == 200
        assert upstream.requests[-1].get("stream") is True  # the next client still streams
        deltas = [e.json()["choices"][0]["delta"].get("content") for e in parse_sse(raw)[1:-2]]
        assert "".join(deltas) == "fine thanks" and len(deltas) == 2


async def test_an_upstream_that_says_it_cannot_stream_is_remembered(upstream):
    upstream.reply = lambda body: "fine thanks"
    upstream.stream_refusal = lambda body: web.json_response(
        {"error": {"message": "stream=true is not supported by this server", "type": "invalid_request_error"}},
        status=400)
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        for _ in range(2):
            status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", STREAM)
            assert status == 200 and b"fine thanks" in raw
        assert [r.get("stream") for r in upstream.requests] == [True, None, None]
