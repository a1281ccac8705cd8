"""The SSE wire: headers, whole frames per write, and ``: ping`` comments during silences.

Each frame (or group of frames for one agent delta) goes to the socket in one
``write`` call, so a frame is never split by another writer, and the
keep-alive task can run beside the handler without a lock. The keep-alive
sleeps until ``interval`` after the last write, so a busy stream costs it
nothing; it is an SSE comment because an ``event:`` line without ``data:``
crashes the Python SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from aiohttp import web

SSE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}
PING = b": ping\n\n"
DONE = b"data: [DONE]\n\n"
#: Writes in a row before the writer yields to the event loop (fairness between bursting streams).
YIELD_EVERY = 4


def dumps(obj: Any) -> str:
    """Compact JSON (the wire format of every frame)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def data_frame(obj: Any) -> bytes:
    """``data: <json>`` — the Chat Completions framing (no ``event:`` line)."""
    return b"data: " + dumps(obj).encode() + b"\n\n"


def event_frame(event: str, obj: Any) -> bytes:
    """``event: <type>`` + ``data: <json>`` — the Responses framing."""
    return b"event: " + event.encode() + b"\ndata: " + dumps(obj).encode() + b"\n\n"


class SSEWriter:
    """One open ``text/event-stream`` response with a keep-alive beside it."""

    def __init__(self, request: web.Request, ping_interval: float) -> None:
        self.request = request
        self.ping_interval = ping_interval
        self.response = web.StreamResponse(status=200, headers=SSE_HEADERS)
        self._loop = asyncio.get_running_loop()
        self._last_write = self._loop.time()
        self._keepalive: asyncio.Task[None] | None = None
        self._unyielded = 0
        self.pings = 0

    async def open(self) -> None:
        """Send the headers and start the keep-alive."""
        await self.response.prepare(self.request)
        self._last_write = self._loop.time()
        if self.ping_interval > 0:
            self._keepalive = asyncio.create_task(self._ping_while_silent(), name="sse-keepalive")

    async def write(self, data: bytes) -> None:
        """Write one or more whole frames at once; every :data:`YIELD_EVERY` writes, let other streams run.

        When an upstream delivers a burst (a fast model, a buffered proxy), the
        agent finds every chunk already read and would relay the whole reply
        without ever suspending, starving every other stream and delaying new
        requests' first tokens. So the writer yields to the event loop after a
        few writes in a row. Not after every one: an event-loop turn costs an
        ``epoll`` call, and a paced stream suspends on its own while it waits
        for the upstream. Each frame still goes to the socket the moment it is
        written; nothing waits for the next.
        """
        self._last_write = self._loop.time()
        await self.response.write(data)
        self._unyielded += 1
        if self._unyielded >= YIELD_EVERY:
            self._unyielded = 0
            await asyncio.sleep(0)

    async def close(self) -> None:
        """Stop the keep-alive and end the chunked body (the client sees a clean end)."""
        await self.stop_keepalive()
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.response.write_eof()

    async def stop_keepalive(self) -> None:
        task, self._keepalive = self._keepalive, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, RuntimeError):
                await task

    async def _ping_while_silent(self) -> None:
        try:
            while True:
                due = self._last_write + self.ping_interval - self._loop.time()
                if due > 0:
                    await asyncio.sleep(due)
                    continue
                await self.write(PING)
                self.pings += 1
        except (ConnectionError, RuntimeError):
            return  # the client went away; the handler finds out on its next write or via cancellation
