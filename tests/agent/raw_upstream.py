"""An upstream on 127.0.0.1 that answers with raw bytes: normal, odd and hostile HTTP responses.

Unlike :mod:`scripted_upstream` (aiohttp's server, which only writes what
HTTP allows), each answer here is a coroutine that writes whatever bytes it
likes on the socket: heads that never end, 1xx heads, redirects, resets,
compressed bombs, a byte every few seconds. ``RawUpstream.answer`` is the
current one; every connection reads requests and answers each with it.
What the upstream saw (request heads and bodies) is kept in ``seen``.

An endless answer writes until the client hangs up, or :data:`CAP` bytes
(a failed bound then shows as the case's memory, not as a test that never
ends).
"""

from __future__ import annotations

import asyncio
import json
import zlib
from dataclasses import dataclass, field
from typing import Awaitable, Callable

#: The most an endless answer writes.
CAP = 1 << 30

Answer = Callable[["Exchange"], Awaitable[None]]


@dataclass
class Exchange:
    """One request on one connection, and the means to answer it."""

    upstream: "RawUpstream"
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    head: bytes
    body: bytes
    keep: bool = True  # read the next request on this connection after the answer

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def endless(self, start: bytes, piece: bytes, pause: float = 0.0) -> None:
        """``start``, then ``piece`` over and over until the client goes (or :data:`CAP` bytes)."""
        self.keep = False
        await self.send(start)
        sent = 0
        while sent < CAP:
            await self.send(piece)
            sent += len(piece)
            if pause:
                await asyncio.sleep(pause)
        self.writer.close()

    def header(self, name: str) -> str | None:
        for line in self.head.split(b"\r\n")[1:]:
            key, _, value = line.partition(b":")
            if key.strip().lower() == name.lower().encode():
                return value.strip().decode("latin-1")
        return None

    def json(self) -> dict:
        return json.loads(self.body)

    @property
    def port(self) -> int:
        return self.upstream.port


@dataclass
class RawUpstream:
    answer: Answer | None = None
    seen: list[Exchange] = field(default_factory=list)
    port: int = 0
    url: str = ""

    async def __aenter__(self) -> "RawUpstream":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=1 << 20)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._tasks: set[asyncio.Task] = set()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                exchange = Exchange(self, reader, writer, head, b"")
                length = exchange.header("content-length")
                exchange.body = await reader.readexactly(int(length)) if length else b""
                self.seen.append(exchange)
                assert self.answer is not None, "no answer set"
                await self.answer(exchange)
                if not exchange.keep:
                    break
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()


# -- building answers ----------------------------------------------------------------------------------


def chunk(content: str | None = None, finish: str | None = None) -> dict:
    delta = {"content": content} if content is not None else {}
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def completion(content: str) -> dict:
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


def sse(*pieces: str, done: bool = True, sep: str = "\n") -> bytes:
    """A plain text answer as SSE events (``sep``: the line ending)."""
    events = [chunk(p) for p in pieces] + [chunk(finish="stop")]
    body = "".join(f"data: {json.dumps(e)}{sep}{sep}" for e in events)
    if done:
        body += f"data: [DONE]{sep}{sep}"
    return body.encode()


def head(status: str = "200 OK", *fields: str, length: int | None = None,
         content_type: str | None = "text/event-stream", version: str = "HTTP/1.1") -> bytes:
    lines = [f"{version} {status}"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    lines += fields
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts if p) + b"0\r\n\r\n"


def answer_with(*writes: bytes, keep: bool = True, pause: float = 0.0) -> Answer:
    """An answer that writes ``writes`` in turn (``pause`` s apart); ``keep``: the connection stays open."""
    async def answer(ex: Exchange) -> None:
        ex.keep = keep
        for i, data in enumerate(writes):
            if i and pause:
                await asyncio.sleep(pause)
            await ex.send(data)
        if not keep:
            ex.writer.close()
    return answer


def bomb(wbits: int, size: int = 1 << 30, block: int = 1 << 20) -> bytes:
    """``size`` bytes of zeros compressed (gzip with wbits 31, zlib's deflate with 15): about a thousandth."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    zeros = bytes(block)
    return b"".join(packer.compress(zeros) for _ in range(size // block)) + packer.flush()
