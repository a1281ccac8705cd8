"""Stopping the gateway while turns are in flight: every client gets a proper ending, new turns get 503."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import openai
import pytest

from api_helpers import MODEL, api, eventually, gateway_config, parse_sse, post_raw, running_gateway

CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}


def hang_after(text: str):
    async def script(body, s):
        await s.role()
        await s.text(text)
        await asyncio.Event().wait()
    return script


async def test_stop_ends_open_streams_with_an_error_then_done(upstream):
    upstream.stream_script = hang_after("Hello")
    gw_cm = running_gateway(gateway_config(model=upstream.model_config()))
    gw = await gw_cm.__aenter__()
    stopped = False
    try:
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{gw.url}/v1/chat/completions", json={**CHAT, "stream": True}) as r:
                seen = b""
                while b"Hello" not in seen:
                    seen += await asyncio.wait_for(r.content.readany(), 10)
                stopping = asyncio.create_task(gw_cm.__aexit__(None, None, None))
                stopped = True
                seen += await asyncio.wait_for(r.read(), 10)
            events = parse_sse(seen)
            assert events[-1].data == "[DONE]"
            assert events[-2].json()["error"]["code"] == "server_shutdown"
            await asyncio.wait_for(stopping, 10)
        assert upstream.hung_up.is_set()  # the interrupted turn closed its upstream request
    finally:
        if not stopped:
            await gw_cm.__aexit__(None, None, None)


async def test_new_turns_are_refused_with_503_while_closing(gateway):
    api(gateway).closing = True  # what shutdown sets first, before it interrupts the running turns
    for path, body in (("/v1/chat/completions", CHAT), ("/v1/responses", {"model": MODEL, "input": "hi"})):
        status, headers, raw = await post_raw(f"{gateway.url}{path}", {**body, "stream": True})
        assert status == 503 and json.loads(raw)["error"]["code"] == "server_shutdown"
        assert headers["Retry-After"] == "5"
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{gateway.url}/health") as r:
            assert r.status == 503 and (await r.json())["status"] == "shutting_down"


async def test_stop_during_a_non_streaming_turn_answers_503(upstream):
    upstream.stream_script = hang_after("Hello")
    gw_cm = running_gateway(gateway_config(model=upstream.model_config()))
    gw = await gw_cm.__aenter__()
    request = asyncio.create_task(post_raw(f"{gw.url}/v1/responses", {"model": MODEL, "input": "hi"}))
    await eventually(lambda: upstream.open_streams == 1, 5, "the upstream request is open")
    await gw_cm.__aexit__(None, None, None)
    status, _, body = await asyncio.wait_for(request, 10)
    assert status == 503
    assert json.loads(body)["error"]["code"] == "server_shutdown"


async def test_non_streaming_upstream_failure_is_a_502_in_openai_shape(upstream):
    async def refuse(body, s):
        s.cut()
    upstream.stream_script = refuse  # and the non-streaming retry is refused with a 400
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.APIStatusError) as info:
            await client.chat.completions.create(**CHAT)
        assert info.value.status_code == 502 and info.value.body["code"] == "upstream_error"
        with pytest.raises(openai.APIStatusError) as info:
            await client.responses.create(model=MODEL, input="hi")
        assert info.value.status_code == 502
        assert upstream.url not in json.dumps(info.value.body)
