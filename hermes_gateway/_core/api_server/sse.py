"""The SSE wire: headers, whole frames per write, and ``: ping`` comments during silences.

Each frame (or group of frames for one agent delta) goes to the socket in one
``write`` call, so a frame is never split by another writer, and the
keep-alive can write beside the handler without a lock. The keep-alive is a
timer due ``interval`` after the last write, so a busy stream costs it
almost nothing; it is an SSE comment because an ``event:`` line without
``data:`` crashes the Python SDK. The headers leave with the first frame,
and the last frames with the end of the body, each in one ``send``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Callable

from aiohttp import web

from ..json_compact import dumps as compact_dumps, json_string as compact_json_string

SSE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}
PING = b": ping\n\n"
DONE = b"data: [DONE]\n\n"
#: Writes in a row before the writer yields to the event loop (fairness between bursting streams).
YIELD_EVERY = 4


#: Compact JSON (the wire format of every frame): ``json.dumps(obj, separators=(",", ":"), ensure_ascii=False)``'s
#: text, from one C encoder made once (:mod:`..json_compact`).
dumps: Callable[[Any], str] = compact_dumps

#: A ``str`` as a JSON string literal: exactly what ``json.dumps(text, ensure_ascii=False)`` returns, without
#: the encoder it builds per call. The one thing a content frame encodes per delta.
json_string: Callable[[str], str] = compact_json_string


def data_frame(obj: Any) -> bytes:
    """``data: <json>`` — the Chat Completions framing (no ``event:`` line)."""
    return b"data: " + dumps(obj).encode() + b"\n\n"


def event_frame(event: str, obj: Any) -> bytes:
    """``event: <type>`` + ``data: <json>`` — the Responses framing."""
    return b"event: " + event.encode() + b"\ndata: " + dumps(obj).encode() + b"\n\n"


class _SSEResponse(web.StreamResponse):
    """A ``StreamResponse`` whose headers leave with its first frame, in one ``send``, not in one of their own.

    (aiohttp's own switch, which its ``web.Response`` uses; older aiohttp ignores it and sends them at once.)
    """

    _send_headers_immediately = False


class SSEWriter:
    """One open ``text/event-stream`` response with a keep-alive beside it."""

    def __init__(self, request: web.Request, ping_interval: float) -> None:
        self.request = request
        self.ping_interval = ping_interval
        self.response = _SSEResponse(status=200, headers=SSE_HEADERS)
        self._loop = asyncio.get_running_loop()
        self._last_write = self._loop.time()
        self._timer: asyncio.TimerHandle | None = None
        self._keepalive: asyncio.Task[None] | None = None
        self._unyielded = 0
        self._ended = False
        self._opened = False
        self.pings = 0

    async def open(self) -> None:
        """Prepare the response (its headers go out with the first frame) and arm the keep-alive.

        Done by the first write (or :meth:`close`) if not before: the stream's writer first starts the
        agent, whose upstream request then leaves before this work is done (a burst's first tokens,
        bench/README.md issue 28). Idempotent.
        """
        if self._opened:
            return
        self._opened = True
        await self.response.prepare(self.request)
        self._last_write = self._loop.time()
        if self.ping_interval > 0:
            self._timer = self._loop.call_at(self._last_write + self.ping_interval, self._silence_check)

    async def write(self, data: bytes, *, then_wait: bool = False) -> None:
        """Write one or more whole frames at once; every :data:`YIELD_EVERY` writes, let other streams run.

        When an upstream delivers a burst (a fast model, a buffered proxy), the
        agent finds every chunk already read and would relay the whole reply
        without ever suspending, starving every other stream and delaying new
        requests' first tokens. So the writer yields to the event loop after a
        few writes in a row. Not after every one: an event-loop turn costs an
        ``epoll`` call, and a paced stream suspends on its own while it waits
        for the upstream. Each frame still goes to the socket the moment it is
        written; nothing waits for the next.

        ``then_wait``: the caller waits for the agent right after this write
        (:mod:`.coalesce`), so other streams get their turn then: no extra
        event-loop turn (on a paced stream it cost a whole resumption of the
        handler every few chunks), and the run of writes starts over.
        """
        if not self._opened:
            await self.open()
        self._last_write = self._loop.time()
        await self.response.write(data)
        if then_wait:
            self._unyielded = 0
            return
        self._unyielded += 1
        if self._unyielded >= YIELD_EVERY:
            self._unyielded = 0
            await asyncio.sleep(0)

    async def end(self, data: bytes) -> None:
        """Write the last frames and the end of the chunked body in one ``send``; stop the keep-alive."""
        if not self._opened:
            await self.open()
        await self.stop_keepalive()
        self._ended = True
        self._last_write = self._loop.time()
        await self.response.write_eof(data)

    async def close(self) -> None:
        """Stop the keep-alive and end the chunked body (the client sees a clean end)."""
        await self.stop_keepalive()
        if self._ended:
            return
        self._ended = True
        with contextlib.suppress(ConnectionError, RuntimeError):
            if not self._opened:  # nothing was written: still a well-formed (empty) event stream
                await self.open()
                await self.stop_keepalive()
            await self.response.write_eof()

    async def stop_keepalive(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        task, self._keepalive = self._keepalive, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, RuntimeError):
                await task

    def _silence_check(self) -> None:
        """The keep-alive timer: a ping when nothing was written for ``ping_interval``, else look again later.

        A timer rather than a task per stream: a busy stream costs it one timer per interval, and
        ending a stream cancels a timer instead of waking a task to cancel it.
        """
        self._timer = None
        if self._ended:
            return
        due = self._last_write + self.ping_interval
        if due > self._loop.time():
            self._timer = self._loop.call_at(due, self._silence_check)
            return
        self._keepalive = self._loop.create_task(self._ping(), name="sse-keepalive")

    async def _ping(self) -> None:
        try:
            await self.write(PING)
        except (ConnectionError, RuntimeError):
            return  # the client went away; the handler finds out on its next write or via cancellation
        self.pings += 1
        if not self._ended and self._timer is None:
            self._timer = self._loop.call_at(self._last_write + self.ping_interval, self._silence_check)
