"""A client that goes away cancels the agent turn and its upstream request; nothing is left behind.

The bounds here are "does not hang" bounds with room for a noisy machine
(the requirement is 1 s; the assertions allow 2 s).
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from api_helpers import MODEL, api, eventually, gateway_config, metric, running_gateway

HANG_AFTER_HELLO = "hello"
HANG_BEFORE_TEXT = "silent"
BOUND = 2.0


def hanging(mode: str):
    async def script(body, s):
        await s.role()
        if mode == HANG_AFTER_HELLO:
            await s.text("Hello")
        await asyncio.Event().wait()  # never answers more; only a hang-up ends this
    return script


def request_for(path: str, stream: bool) -> dict:
    if path == "/v1/responses":
        return {"model": MODEL, "input": "hi", "stream": stream}
    return {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": stream}


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
@pytest.mark.parametrize("mode, wait_for", [(HANG_AFTER_HELLO, b"Hello"), (HANG_BEFORE_TEXT, b"data: ")])
async def test_disconnect_mid_stream_or_before_first_token_cancels_upstream(upstream, path, mode, wait_for):
    upstream.stream_script = hanging(mode)
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        baseline = len(asyncio.all_tasks())
        session = aiohttp.ClientSession()
        response = await session.post(f"{gw.url}{path}", json=request_for(path, True))
        seen = b""
        while wait_for not in seen:
            seen += await asyncio.wait_for(response.content.readany(), 10)
        await eventually(lambda: upstream.open_streams == 1, 5, "the upstream request is open")
        assert await metric(gw, "hermes_api_active_streams") == 1
        response.close()  # the client goes away
        await session.close()
        await eventually(upstream.hung_up.is_set, BOUND, "the upstream saw its connection close")
        await eventually(lambda: api(gw).metrics.active_streams == 0, BOUND, "the stream gauge went back to 0")
        assert await metric(gw, "hermes_api_active_streams") == 0
        assert api(gw).metrics.errors["client_disconnect"] == 1
        assert not api(gw).active
        await eventually(lambda: len(asyncio.all_tasks()) <= baseline, BOUND, "no task left behind")


async def test_disconnect_during_a_non_streaming_request_cancels_upstream(upstream):
    upstream.stream_script = hanging(HANG_AFTER_HELLO)
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        async with aiohttp.ClientSession() as session:
            task = asyncio.create_task(session.post(f"{gw.url}/v1/chat/completions",
                                                    json=request_for("/v1/chat/completions", False)))
            await eventually(lambda: upstream.open_streams == 1, 5, "the upstream request is open")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        await eventually(upstream.hung_up.is_set, BOUND, "the upstream saw its connection close")
        await eventually(lambda: not api(gw).active, BOUND, "the turn is gone")


async def test_many_abandoned_streams_leave_the_gateway_healthy(upstream):
    upstream.stream_script = hanging(HANG_AFTER_HELLO)
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        async def abandon() -> None:
            async with aiohttp.ClientSession() as session:
                async with session.post(f"{gw.url}/v1/chat/completions",
                                        json=request_for("/v1/chat/completions", True)) as r:
                    seen = b""
                    while b"Hello" not in seen:
                        seen += await r.content.readany()
        await asyncio.gather(*(abandon() for _ in range(20)))
        await eventually(lambda: upstream.open_streams == 0, 5, "every upstream request closed")
        await eventually(lambda: api(gw).metrics.active_streams == 0, 5, "every stream closed")
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{gw.url}/health") as r:
                assert (await r.json()) == {"status": "ok", "active_streams": 0}
