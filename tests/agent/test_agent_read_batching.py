"""Batched upstream reads for platform replies (:mod:`hermes_gateway._core.agent.read_batching`).

A platform chat shows a growing reply at most once per preview interval, so
its upstream reads wait for more of the answer: what arrives meanwhile is
one read, one pass through the agent, one text delta. What must not change:
the first text comes at once, the end comes at once, nothing is lost or
reordered, a cancelled read still closes the connection, and the API
server's streams (no batch set) read each chunk as it comes.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.read_batching import MAX_READ_BATCH, READ_BATCH, ReadBatch, read_batch_for
from hermes_gateway._core.agent.sse import SSEPayloads
from hermes_gateway._core.events import TextDelta, TurnEnd

from scripted_upstream import ScriptedUpstream, chunk, model_config
from test_agent_http1 import Server, pool_for, request
from test_agent_sse import chat_chunks, response, sdks

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def piece(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n"


@pytest.fixture
async def server():
    s = Server()
    yield s
    s.close()


async def _until(condition: Any) -> None:
    async with asyncio.timeout(10):
        while not condition():
            await asyncio.sleep(0.005)


def test_a_quarter_of_the_preview_interval_at_most_a_quarter_second() -> None:
    assert read_batch_for(1.0) == MAX_READ_BATCH == 0.25  # Telegram's private chats: one edit a second
    assert read_batch_for(3.0) == MAX_READ_BATCH  # a group's 20 a minute
    assert read_batch_for(0.05) == 0.0125  # the web console, which may redraw 20 times a second


async def test_a_batched_read_takes_everything_that_arrived_and_the_end_wakes_it_at_once(server: Server) -> None:
    pool = pool_for(server)
    batching = READ_BATCH.set(ReadBatch(30.0))  # longer than the test may take: only the end can return the second read
    try:
        task, conn = await server.requested(pool)
    finally:
        READ_BATCH.reset(batching)
    try:
        conn.sendall(HEAD + piece(b"data: 1\n\n"))
        response_ = await task
        async with asyncio.timeout(10):
            assert await response_.read_chunk() == b"data: 1\n\n"  # the first read never waits
        reading = asyncio.ensure_future(response_.read_chunk())
        conn.sendall(piece(b"data: 2\n\n"))
        await _until(lambda: response_._conn.buffered >= 9)
        conn.sendall(piece(b"data: 3\n\n"))
        await _until(lambda: response_._conn.buffered >= 18)
        assert not reading.done()  # bytes alone do not end the wait
        conn.sendall(b"0\r\n\r\n")
        async with asyncio.timeout(10):
            assert await reading == b"data: 2\n\ndata: 3\n\n"  # both, in order, as soon as the body ended
        assert await response_.read_chunk() == b""
        assert response_.at_eof()
    finally:
        conn.close()
        await pool.aclose()


async def test_a_batched_read_returns_when_its_time_is_up_and_without_batching_each_read_returns_at_once(
        server: Server) -> None:
    pool = pool_for(server)
    batching = READ_BATCH.set(ReadBatch(0.05))
    try:
        task, conn = await server.requested(pool)
    finally:
        READ_BATCH.reset(batching)
    plain_task = asyncio.ensure_future(pool.request(request(server.port)))  # no batch: the API server's
    plain_conn = await server.accept()
    try:
        await server.read_request(plain_conn)
        conn.sendall(HEAD + piece(b"a"))
        plain_conn.sendall(HEAD + piece(b"a"))
        batched, plain = await task, await plain_task
        assert await batched.read_chunk() == b"a" and await plain.read_chunk() == b"a"
        reading = asyncio.ensure_future(batched.read_chunk())
        conn.sendall(piece(b"b"))
        async with asyncio.timeout(10):
            assert await reading == b"b"  # the body goes on: the batch's time ended the wait
        plain_reading = asyncio.ensure_future(plain.read_chunk())
        plain_conn.sendall(piece(b"b"))
        async with asyncio.timeout(10):
            assert await plain_reading == b"b"
        assert batched._batch is not None and batched._batch.seconds == 0.05 and plain._batch is None
    finally:
        conn.close()
        plain_conn.close()
        await pool.aclose()


async def test_a_cancelled_batched_read_closes_the_connection(server: Server) -> None:
    pool = pool_for(server)
    batching = READ_BATCH.set(ReadBatch(30.0))
    try:
        task, conn = await server.requested(pool)
    finally:
        READ_BATCH.reset(batching)
    conn.sendall(HEAD + piece(b"a"))
    response_ = await task
    assert await response_.read_chunk() == b"a"
    reading = asyncio.ensure_future(response_.read_chunk())
    await _until(lambda: response_._conn.lingering)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    conn.settimeout(2)
    assert conn.recv(10) == b""  # closed by the client: the upstream sees it go
    assert not pool._open and not pool._idle
    conn.close()
    await pool.aclose()


@settings(max_examples=200, deadline=None)
@given(chat_chunks)
def test_texts_alone_lose_nothing_the_payloads_held(chunks: list[bytes]) -> None:
    """``yield_texts``: a chunk handed out as its text held nothing else (no usage, no finish, no tool call);
    every other chunk is the SDK's payload unchanged."""
    parts = [*chunks, b"data: [DONE]\n\n"]

    async def both() -> tuple[list[Any], Any]:
        reader = SSEPayloads(response(parts))
        reader.yield_texts()
        mine: list[Any] = []
        try:
            while True:
                mine.append(await reader.next())
        except StopAsyncIteration:
            pass
        except Exception:
            pass
        finally:
            await reader.aclose()
        return mine, await sdks(parts)

    mine, (theirs, _) = asyncio.run(both())
    assert len(mine) == len(theirs)
    for ours_, sdk in zip(mine, theirs):
        if type(ours_) is str:
            (choice,) = sdk["choices"]
            assert choice["delta"] == {"content": ours_} and not choice.get("finish_reason")
            assert sdk.get("usage") is None
        else:
            assert ours_ == sdk


async def test_a_platform_reply_joins_texts_read_together_and_the_api_servers_does_not() -> None:
    """The upstream writes six words in one burst: a batched turn gets them as one delta, an unbatched one as six,
    and so does a chat reply whose batch has not started (its first text is not out: the delivery counts deltas
    towards ``streaming.min_tokens``); the text is the same."""
    words = ["one ", "two ", "three ", "four ", "five ", "six"]
    burst = b"".join(b"data: " + json.dumps(chunk(w)).encode() + b"\n\n" for w in words)
    async with ScriptedUpstream() as upstream:
        script = [("data", chunk("", role="assistant")), ("data", chunk("zero ")), ("raw", burst),
                  ("data", chunk(finish="stop")), ("raw", b"data: [DONE]\n\n")]
        for _ in range(3):
            upstream.add(*script)
        async with AIAgent.from_config(model_config(upstream.url)) as agent:
            plain = [e async for e in agent.astream("hi")]
            batching = READ_BATCH.set(ReadBatch(MAX_READ_BATCH))
            try:
                batched = [e async for e in agent.astream("hi")]
            finally:
                READ_BATCH.reset(batching)
            batching = READ_BATCH.set(ReadBatch())
            try:
                not_yet = [e async for e in agent.astream("hi")]
            finally:
                READ_BATCH.reset(batching)
    for events in (plain, batched, not_yet):
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "zero " + "".join(words)
        assert isinstance(events[-1], TurnEnd) and events[-1].reply == "zero " + "".join(words)
    assert [e.text for e in plain if isinstance(e, TextDelta)] == ["zero ", *words]
    assert [e.text for e in not_yet if isinstance(e, TextDelta)] == ["zero ", *words]
    assert [e.text for e in batched if isinstance(e, TextDelta)] == ["zero ", "".join(words)]
