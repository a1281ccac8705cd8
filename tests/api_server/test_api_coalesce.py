"""Frames that are ready together go out in one write, and none waits for a token that does not exist yet."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from hermes_gateway._core.api_server.coalesce import next_event

from api_helpers import MODEL, gateway_config, running_gateway


def contents(data: bytes) -> list[str]:
    """The content deltas in a piece of the SSE wire."""
    found = []
    for line in data.decode().split("\n"):
        if line.startswith("data: {"):
            choices = json.loads(line[6:]).get("choices") or [{}]
            content = choices[0].get("delta", {}).get("content")
            if content:
                found.append(content)
    return found


async def test_a_burst_goes_out_in_one_write_before_the_next_token_exists(upstream):
    next_token = asyncio.Event()

    async def script(body, s):
        await s.role()
        await s.response.write(s._chunk({"content": "one "}) + s._chunk({"content": "two "})
                               + s._chunk({"content": "three "}))  # one read holds three chunks
        await next_token.wait()  # the model has not produced the next token yet
        await s.text("four")
        await s.finish()

    upstream.stream_script = script
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{gw.url}/v1/chat/completions",
                                    json={"model": MODEL, "stream": True,
                                          "messages": [{"role": "user", "content": "hi"}]}) as r:
                http_chunks: list[bytes] = []
                current = b""
                while "three" not in "".join(contents(b"".join(http_chunks) + current)):
                    data, end_of_chunk = await asyncio.wait_for(r.content.readchunk(), 10)
                    current += data
                    if end_of_chunk:
                        http_chunks.append(current)
                        current = b""
                # All three are on the wire while the upstream still waits, and in one HTTP chunk (one write).
                # (A trailing space is held back until what follows it is known: reasoning tags.)
                assert ["".join(contents(c)) for c in http_chunks if contents(c)] == ["one two three"]
                assert len(contents(http_chunks[-1])) == 3
                next_token.set()
                rest = await asyncio.wait_for(r.read(), 10)
    assert "".join(contents(rest)) == " four" and rest.endswith(b"data: [DONE]\n\n")


async def test_next_event_flushes_only_when_the_iterator_would_wait() -> None:
    gate = asyncio.Event()
    log: list[str] = []

    async def events():
        yield "a"
        yield "b"  # ready at once
        log.append("waiting")
        await gate.wait()
        yield "c"

    async def flush() -> None:
        log.append("flush")

    stream = events()
    got = [await next_event(stream.__anext__, flush), await next_event(stream.__anext__, flush)]
    assert got == ["a", "b"] and log == []  # nothing had to wait: nothing flushed
    waiter = asyncio.ensure_future(next_event(stream.__anext__, flush))
    await asyncio.sleep(0.01)
    assert log == ["waiting", "flush"] and not waiter.done()  # flushed before the wait, then waits
    gate.set()
    assert await waiter == "c"
    with pytest.raises(StopAsyncIteration):
        await next_event(stream.__anext__, None)


async def test_a_failed_flush_unwinds_the_waiting_iterator_like_a_cancellation() -> None:
    cleaned: list[str] = []

    async def events():
        try:
            await asyncio.Event().wait()  # an upstream that has nothing yet
            yield "never"
        except asyncio.CancelledError:
            cleaned.append("cancelled at its wait")
            raise
        finally:
            await asyncio.sleep(0)  # clean-up that itself awaits (closing the upstream request)
            cleaned.append("finally")

    async def flush() -> None:
        await asyncio.sleep(0)
        raise ConnectionResetError("the client went away")

    stream = events()
    with pytest.raises(ConnectionResetError):
        await next_event(stream.__anext__, flush)
    assert cleaned == ["cancelled at its wait", "finally"]
    await stream.aclose()  # already finished: closing it is a no-op, not "already running"


async def test_cancelling_the_task_reaches_the_iterators_wait() -> None:
    cleaned: list[str] = []
    started = asyncio.Event()

    async def events():
        try:
            started.set()
            await asyncio.sleep(60)
            yield "never"
        finally:
            cleaned.append("finally")

    async def flush() -> None:
        pass

    stream = events()
    task = asyncio.ensure_future(next_event(stream.__anext__, flush))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == ["finally"]


def response_deltas(data: bytes) -> list[str]:
    """The ``response.output_text.delta`` texts in a piece of the Responses SSE wire."""
    found = []
    for line in data.decode().split("\n"):
        if line.startswith("data: {"):
            event = json.loads(line[6:])
            if event.get("type") == "response.output_text.delta":
                found.append(event["delta"])
    return found


async def test_a_responses_burst_goes_out_in_one_write_before_the_next_token_exists(upstream):
    next_token = asyncio.Event()

    async def script(body, s):
        await s.role()
        await s.response.write(s._chunk({"content": "one "}) + s._chunk({"content": "two "})
                               + s._chunk({"content": "three "}))  # one read holds three chunks
        await next_token.wait()
        await s.text("four")
        await s.finish()

    upstream.stream_script = script
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{gw.url}/v1/responses",
                                    json={"model": MODEL, "stream": True, "input": "hi"}) as r:
                http_chunks: list[bytes] = []
                current = b""
                while "three" not in "".join(response_deltas(b"".join(http_chunks) + current)):
                    data, end_of_chunk = await asyncio.wait_for(r.content.readchunk(), 10)
                    current += data
                    if end_of_chunk:
                        http_chunks.append(current)
                        current = b""
                # Like Chat Completions: the three deltas of one read leave in one HTTP chunk, before the next
                # token exists, and after the response's opening events.
                assert [response_deltas(c) for c in http_chunks if response_deltas(c)] == [["one", " two", " three"]]
                next_token.set()
                rest = await asyncio.wait_for(r.read(), 10)
    assert "".join(response_deltas(rest)) == " four"
    assert b"event: response.completed" in rest
