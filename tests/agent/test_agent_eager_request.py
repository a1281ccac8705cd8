"""An upstream request leaves in the step that sends it (issue 28: a burst's upstream calls first)."""

from __future__ import annotations

import asyncio
import socket

import aiohttp
import pytest

from hermes_gateway._core.agent.eager_request import NEEDED, EagerBodyRequest, started

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


async def test_a_coroutine_that_never_waits_has_run_before_it_is_awaited():
    ran = []

    async def write() -> str:
        ran.append("written")
        return "done"

    coro = started(write())
    assert ran == ["written"]
    assert await coro == "done"


async def test_a_coroutine_that_waits_runs_up_to_its_wait_and_the_rest_when_awaited():
    ran = []
    gate = asyncio.get_running_loop().create_future()

    async def write() -> int:
        ran.append("head")
        value = await gate
        ran.append("tail")
        return value + 1

    task = asyncio.ensure_future(started(write()))
    assert ran == ["head"]
    await asyncio.sleep(0)
    assert ran == ["head"] and not task.done()
    gate.set_result(41)
    assert await task == 42 and ran == ["head", "tail"]


async def test_an_error_before_the_first_wait_is_raised_where_it_is_awaited():
    async def write() -> None:
        raise ConnectionResetError("gone")

    coro = started(write())
    with pytest.raises(ConnectionResetError, match="gone"):
        await coro


async def test_cancelling_the_task_reaches_the_waiting_coroutine():
    cleaned = []
    gate = asyncio.get_running_loop().create_future()

    async def write() -> None:
        try:
            await gate
        finally:
            cleaned.append(True)

    task = asyncio.ensure_future(started(write()))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == [True]


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += conn.recv(65536)
    return data


async def _bytes_out_after_one_step(request_class: type[aiohttp.ClientRequest]) -> bytes:
    """Post on a pooled connection; what the upstream has received once the posting task ran one step."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession(request_class=request_class) as session:
        first = asyncio.ensure_future(session.post(f"http://127.0.0.1:{port}/v1/chat", json={"n": 1}))
        conn, _ = await loop.run_in_executor(None, listener.accept)
        try:
            await loop.run_in_executor(None, _read_request, conn)
            conn.sendall(RESPONSE)
            response = await first
            assert await response.read() == b"ok"  # the connection goes back to the pool
            second = asyncio.ensure_future(session.post(f"http://127.0.0.1:{port}/v1/chat", json={"n": 2}))
            await asyncio.sleep(0)  # the posting task's first step: up to waiting for the response
            try:
                seen = conn.recv(65536, socket.MSG_DONTWAIT)
            except BlockingIOError:
                seen = b""
            conn.sendall(RESPONSE)
            await (await second).read()
            return seen
        finally:
            conn.close()
            listener.close()


async def test_the_request_bytes_are_out_when_the_posting_step_ends():
    seen = await _bytes_out_after_one_step(EagerBodyRequest)
    assert seen.startswith(b"POST /v1/chat HTTP/1.1\r\n") and seen.endswith(b'{"n": 2}')


@pytest.mark.skipif(not NEEDED, reason="aiohttp starts the body writer eagerly itself from Python 3.12")
async def test_without_it_the_bytes_wait_for_the_next_pass_of_the_loop():
    """What EagerBodyRequest is for: the plain request writes from a task queued behind everything else."""
    assert await _bytes_out_after_one_step(aiohttp.ClientRequest) == b""


async def test_the_agents_upstream_requests_are_eager(fake) -> None:
    """The fast transport's session makes EagerBodyRequests (where aiohttp does not do it itself)."""
    from hermes_gateway._core.agent import AIAgent
    from hermes_gateway._core.events import TextDelta
    from scripted_upstream import model_config, text_stream

    fake.add(*text_stream("hello ", "there"))
    agent = AIAgent.from_config(model_config(fake.url, api_key="sk-eager"), tools=[])
    try:
        assert "".join([e.text async for e in agent.astream("hi") if isinstance(e, TextDelta)]) == "hello there"
        session = agent._pool.all()[0].transport.poster._session
        assert session._request_class is (EagerBodyRequest if NEEDED else aiohttp.ClientRequest)
    finally:
        await agent.aclose()
