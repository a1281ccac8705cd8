"""A lean HTTP/1.1 client for one upstream: keep-alive connections, one ``write`` per request, llhttp parsing.

Why not aiohttp's client here: in the API server's one-request-at-a-time
benchmark, aiohttp's ``ClientSession`` (its request object, header
merging, cookie jar, timers, response wrappers and stream reader) was
about 0.35 M instructions of the gateway's ~1.33 M per request: a raw
aiohttp relay measured 0.79 M, the same relay on this kind of client 0.44 M
(bench/README.md, issue 28). The agent sends one kind of request to one
fixed URL, with headers fixed per upstream, so this client keeps only
what that needs and pre-renders the request head once. Bounded and
brought to the library's standard (issue 33: bounds, 1xx, redirects in
:mod:`.stream_request`, Happy Eyeballs), it still costs 27 % fewer
instructions per request than aiohttp's client (0.975 M against 1.33 M,
bench/README.md), and ``tests/agent/test_agent_transport_corpus.py``
holds it to the SDK's httpx client on 53 normal, odd and hostile answers:

- connections are opened with ``loop.create_connection`` on the socket
  Happy Eyeballs connected (TLS with the SDK's SSL context for ``https``), kept alive and reused, at most
  :data:`MAX_CONNECTIONS` at once, idle ones closed after ``keepalive``
  seconds; connecting is bounded by ``connect_timeout``; waiting for a free
  connection is not (a burst of more replies than connections queues: the
  caller's first-token deadline bounds the wait, as the SDK's pool timeout
  is its whole request's; aiohttp's ``connect`` timeout counted the wait
  too, which failed a burst of 10,000 chats' last turns as "the model is
  unavailable" after 10 s in the queue: bench/README.md, issue 39);
- a request is written in the step that sends it (head and body in one
  ``write``): on a pooled connection the upstream has it before the
  caller's task next waits (a burst's upstream calls first);
- connecting tries the host's addresses the Happy Eyeballs way (RFC 8305,
  ``aiohappyeyeballs``, as aiohttp does): an IPv6 address that does not
  answer costs 0.25 s, not the connect timeout;
- responses are parsed by ``httptools`` (llhttp, as aiohttp and uvicorn
  use): chunked, ``Content-Length`` and close-delimited bodies; 1xx heads
  (``100 Continue``, ``103 Early Hints``) are skipped as aiohttp and httpx
  skip them; a response is read within :mod:`.limits`' bounds (the head's
  bytes and fields, a non-streamed body's bytes); compression is never asked
  for (``Accept-Encoding: identity``) and a compressed body is refused, not
  decoded (no bomb can go off);
- bytes after the end of the response that nobody asked for (a second
  response on a kept-alive connection) are not parsed: the answer asked
  for stands, and the connection is closed rather than reused;
- the body is read as it arrives, everything buffered at once per read,
  with reading paused beyond :data:`HIGH_WATER` buffered bytes; a platform
  reply's reads batch (:mod:`.read_batching`): a read returns no sooner than
  the batch's seconds after the previous one, unless the body ends or fails;
- a connection goes back to the pool only after its whole response was
  read and both sides keep it alive; anything else (a cancelled read, an
  error, a body left unread) closes it;
- a reused connection that the upstream closed as the request went out
  (before any byte of the response) is replaced at once, once.

Errors: connecting fails with :class:`~.errors.UpstreamConnectionError`
(or :class:`~.errors.UpstreamTimedOut`) whose cause is the ``OSError``; a
connection lost or a malformed response before or during the body is
:class:`~.errors.UpstreamConnectionError` (``mid_stream`` once the
headers were in). Retries are the caller's (:mod:`.stream_request`).
"""

from __future__ import annotations

import asyncio
import socket
import ssl as ssl_module
from collections import deque
from typing import Callable

import aiohappyeyeballs
import httptools
from multidict import CIMultiDict, CIMultiDictProxy

from ..errors import HermesError
from .errors import UpstreamConnectionError, UpstreamTimedOut
from .limits import MAX_BODY_BYTES, MAX_HEAD_BYTES, MAX_HEAD_FIELDS, UpstreamTooLarge, check_head
from .read_batching import READ_BATCH

#: Connections per upstream at most (the SDK's default limit).
MAX_CONNECTIONS = 1000
#: How long an idle connection is kept (the SDK's default keep-alive expiry).
KEEPALIVE_EXPIRY = 5.0
#: Reading from the upstream pauses while this many bytes wait to be read (the reader takes them all at once).
HIGH_WATER = 1 << 20
#: How long one address may take before the next is tried alongside it (RFC 8305's and aiohttp's default).
HAPPY_EYEBALLS_DELAY = 0.25


class Http1Error(HermesError):
    """A response the client could not read (malformed, or the connection lost before its end)."""


class _Unasked(HermesError):
    """Raised inside the parser when a second response begins on a connection: nobody asked for it."""


def render_head(method: str, target: str, headers: dict[str, str]) -> bytes:
    """``METHOD target HTTP/1.1`` and the headers, each line ending in CRLF (the blank line not included).

    A name or value that could end its line early (CR, LF, NUL) is refused: a header must not be able to
    smuggle another one (httpx refuses them too).
    """
    lines = [f"{method} {target} HTTP/1.1"]
    for name, value in headers.items():
        if any(c in name or c in value for c in "\r\n\0") or ":" in name:
            raise ValueError(f"the header {name!r} has a character that cannot be sent in an HTTP/1.1 header")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n").encode("latin-1")


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection to the upstream and the response being read on it."""

    __slots__ = ("transport", "parser", "status", "version", "raw_headers", "chunks", "buffered", "headers_done",
                 "complete", "keep_alive", "error", "lost", "paused", "idle_since", "loop", "answered", "_waiter",
                 "head_bytes", "informational", "lingering")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.lost = False
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None
        self.lingering = False  # a batched read is waiting out its time: body bytes alone do not wake it
        self._reset()

    def _reset(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.version = "1.1"
        self.raw_headers: list[tuple[bytes, bytes]] = []
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.headers_done = False
        self.complete = False
        self.keep_alive = False
        self.error: BaseException | None = None
        self.paused = False
        self.answered = False  # a byte of the response arrived
        self.head_bytes = 0  # bytes fed while the head (1xx heads included) was not complete
        self.informational = False  # the head being read is a 1xx one (skipped)

    # -- asyncio.Protocol -----------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.answered = True
        if self.complete or self.error is not None:
            self.close()  # bytes nobody asked for (an idle connection talking): not reusable
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as exc:
            if isinstance(exc.__context__, _Unasked):
                self.close()  # the answer asked for is whole; the rest is a stranger's: not parsed, not reused
                self._wake()
            else:
                self._fail(exc.__context__ if isinstance(exc.__context__, UpstreamTooLarge) else
                           Http1Error(f"malformed response from the upstream ({exc})"))
            return
        except httptools.HttpParserUpgrade:
            self._fail(Http1Error("the upstream switched protocols"))
            return
        except httptools.HttpParserError as exc:
            self._fail(Http1Error(f"malformed response from the upstream ({exc})"))
            return
        if not self.headers_done:
            # httptools gathers a header's name and value in Python bytes, a copy per read: bounded here, by
            # what was fed, so an endless head (or one endless value) costs at most one read past the bound
            self.head_bytes += len(data)
            if self.head_bytes > MAX_HEAD_BYTES and not self.headers_done:
                self._fail(UpstreamTooLarge(f"the upstream sent a response head over {MAX_HEAD_BYTES} bytes"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self.headers_done and not self.complete and exc is None and not self._framed():
            self.complete = True  # a body delimited by the close (no Content-Length, not chunked)
        elif not self.complete and self.error is None:
            self.error = exc or Http1Error("the upstream closed the connection before the response ended")
        self._wake()

    def _framed(self) -> bool:
        """The response says where its body ends (``Content-Length`` or chunked), so a close before it is an error.

        Looked up only when a connection closes mid-body, not for every response.
        """
        for name, value in self.raw_headers:
            lowered = name.lower()
            if lowered == b"content-length" or (lowered == b"transfer-encoding" and b"chunked" in value.lower()):
                return True
        return False

    # -- httptools callbacks --------------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.complete:
            raise _Unasked  # a second response in the same bytes as the first's end

    def on_header(self, name: bytes, value: bytes) -> None:
        headers = self.raw_headers
        headers.append((name, value))
        if len(headers) > MAX_HEAD_FIELDS:
            raise UpstreamTooLarge(f"the upstream sent more than {MAX_HEAD_FIELDS} header fields")

    def on_headers_complete(self) -> None:
        parser = self.parser
        status = parser.get_status_code()
        if 100 <= status < 200 and status != 101:
            # 100 Continue, 103 Early Hints: a head before the answer's; skipped (aiohttp and httpx do too)
            self.informational = True
            self.raw_headers = []
            return
        self.status = status
        self.version = parser.get_http_version()
        self.headers_done = True
        self._wake()

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.buffered += len(body)
        if self.buffered > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
            self._wake()
        elif not self.lingering:
            self._wake()

    def on_message_complete(self) -> None:
        if self.informational:
            self.informational = False  # the answer's own head comes next
            return
        self.complete = True
        self.keep_alive = self.parser.should_keep_alive()
        self._wake()

    # -- the reader's side ----------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Start a request on this connection: a fresh parser, and the whole request in one write."""
        self._reset()
        assert self.transport is not None
        self.transport.write(data)

    async def wait(self) -> None:
        """Until the protocol has something new (headers, body, the end, an error)."""
        waiter = self._waiter = self.loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None

    async def linger(self, until: float) -> None:
        """Until loop time ``until``, or sooner if the response ends, fails or fills the buffer (a batched read)."""
        waiter = self._waiter = self.loop.create_future()
        self.lingering = True
        timer = self.loop.call_at(until, self._wake)
        try:
            await waiter
        finally:
            self.lingering = False
            self._waiter = None
            timer.cancel()

    def take(self) -> bytes:
        """Everything buffered, at once; reading resumes if it was paused."""
        chunks = self.chunks
        data = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self.buffered = 0
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data

    def reusable(self) -> bool:
        return self.complete and self.keep_alive and not self.lost and self.error is None and not self.chunks

    def close(self) -> None:
        self.lost = True
        if self.transport is not None:
            self.transport.close()

    def _fail(self, error: BaseException) -> None:
        self.error = error
        self.close()
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class Http1Response:
    """A response whose headers are in; its body read with :meth:`read_chunk` (``b""`` at the end)."""

    __slots__ = ("status", "headers", "http_version", "_conn", "_pool", "_done", "_batch", "_last_read")

    def __init__(self, conn: _Connection, pool: "Http1Pool") -> None:
        self._conn = conn
        self._pool = pool
        self.status = conn.status
        self.http_version = f"HTTP/{conn.version}"
        self.headers: CIMultiDictProxy[str] = CIMultiDictProxy(CIMultiDict(
            (name.decode("latin-1"), value.decode("latin-1")) for name, value in conn.raw_headers))
        try:
            check_head(self.headers, len(conn.raw_headers))  # a compressed body is refused, never decoded
        except UpstreamTooLarge as exc:
            conn.close()
            pool.forget(conn)
            raise UpstreamConnectionError() from exc
        self._done = False
        self._batch = READ_BATCH.get()  # the turn's, or None (see read_batching)
        self._last_read = 0.0  # loop time of the last read that returned bytes, when batching (0: none yet)

    @property
    def closed(self) -> bool:
        """Released or closed: nothing more will be read."""
        return self._done

    def at_eof(self) -> bool:
        """The whole body has been read."""
        conn = self._conn
        return self._done or (conn.complete and not conn.chunks)

    async def read_chunk(self) -> bytes:
        """The body bytes that arrived since the last call (waiting for some), or ``b""`` after the last.

        Batching (a ``READ_BATCH`` when the request was made): not sooner than its seconds after the previous
        read, unless the body ends, fails or fills the buffer first; the first read never waits.
        """
        conn = self._conn
        batch = self._batch
        if batch is not None and batch.seconds and self._last_read:
            until = self._last_read + batch.seconds
            if until > conn.loop.time() and not (conn.complete or conn.paused or conn.lost or conn.error):
                try:
                    await conn.linger(until)
                except BaseException:
                    self.close()  # cut short (cancelled): the rest of the body will never be read
                    raise
        while True:
            if conn.chunks:
                if batch is not None:
                    self._last_read = conn.loop.time()
                return conn.take()
            if conn.complete or self._done:
                return b""
            if conn.error is not None:
                self.close()
                raise UpstreamConnectionError(mid_stream=True) from conn.error
            try:
                await conn.wait()
            except BaseException:
                self.close()  # cut short (cancelled): the rest of the body will never be read
                raise

    async def read(self, limit: int = MAX_BODY_BYTES) -> bytes:
        """The whole body, then the connection released; a body over ``limit`` bytes is an error (and closed)."""
        parts = []
        size = 0
        while True:
            data = await self.read_chunk()
            if not data:
                break
            size += len(data)
            if size > limit:
                self.close()
                raise UpstreamConnectionError(mid_stream=True) from UpstreamTooLarge(
                    f"the upstream sent a body over {limit} bytes")
            parts.append(data)
        self.release()
        return b"".join(parts)

    def release(self) -> None:
        """Done with it: the connection goes back to the pool if its response was read whole, else closes."""
        if self._done:
            return
        self._done = True
        self._pool.release(self._conn)

    def close(self) -> None:
        """Done with it before its end: the connection closes (the upstream sees the client go)."""
        if self._done:
            return
        self._done = True
        self._conn.close()
        self._pool.forget(self._conn)


class Http1Pool:
    """The connections to one upstream (``host``, ``port``, TLS or not)."""

    def __init__(self, host: str, port: int, *, ssl: ssl_module.SSLContext | None, connect_timeout: float,
                 keepalive: float = KEEPALIVE_EXPIRY, limit: int = MAX_CONNECTIONS) -> None:
        self.host = host
        self.port = port
        self.ssl = ssl
        self.connect_timeout = connect_timeout
        self.keepalive = keepalive
        self.limit = limit
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        self._slots: deque[asyncio.Future[None]] = deque()  # requests waiting for a connection under the limit
        self._sweeper: asyncio.TimerHandle | None = None
        self._closed = False

    async def request(self, data: bytes) -> Http1Response:
        """Send a whole request (head and body, rendered by the caller); its response once the headers are in.

        A kept-alive connection can be closed by the upstream just as it is
        reused (its idle timeout and our reuse cross on the wire): when such a
        connection ends before a single byte of the response, the request is
        sent again at once on a new connection, once. (A new connection that
        ends so is an error for the caller's retry policy, with its delay.)
        """
        conn = self._pooled()
        if conn is not None:
            conn.send(data)
            try:
                await self._headers(conn)
                return Http1Response(conn, self)
            except UpstreamConnectionError:
                if conn.answered:
                    raise
        conn = await self._connect()
        conn.send(data)
        await self._headers(conn)
        return Http1Response(conn, self)

    async def _headers(self, conn: _Connection) -> None:
        """Until the response's headers are in; the connection is closed if they never come."""
        try:
            while not conn.headers_done:
                if conn.error is not None:
                    raise UpstreamConnectionError() from conn.error
                await conn.wait()
        except BaseException:
            conn.close()
            self.forget(conn)
            raise

    def release(self, conn: _Connection) -> None:
        if self._closed or not conn.reusable():
            conn.close()
            self.forget(conn)
            return
        loop = conn.loop
        conn.idle_since = loop.time()
        self._idle.append(conn)
        if self._sweeper is None:
            self._sweeper = loop.call_later(self.keepalive, self._sweep)
        self._free_slot()

    def forget(self, conn: _Connection) -> None:
        if conn in self._open:
            self._open.discard(conn)
            self._free_slot()

    async def aclose(self) -> None:
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for conn in list(self._open):
            conn.close()
        self._open.clear()
        self._idle.clear()
        for waiter in self._slots:
            if not waiter.done():
                waiter.cancel()

    # -- internals ------------------------------------------------------------------------------------------

    def _pooled(self) -> _Connection | None:
        idle = self._idle
        while idle:
            conn = idle.pop()
            if not conn.lost and conn.loop.time() - conn.idle_since < self.keepalive:
                return conn
            conn.close()
            self.forget(conn)
        return None

    async def _connect(self) -> _Connection:
        if self._closed:
            raise UpstreamConnectionError() from Http1Error("the agent was closed")
        loop = asyncio.get_running_loop()
        while len(self._open) >= self.limit:  # in turn, for as long as the caller waits (see the module's doc)
            waiter = loop.create_future()
            self._slots.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._free_slot()  # woken, then cancelled before it ran: the next one in line gets the wake-up
                raise
            finally:
                if waiter in self._slots:
                    self._slots.remove(waiter)
            conn = self._pooled()  # a connection released meanwhile
            if conn is not None:
                return conn
            if self._closed:
                raise UpstreamConnectionError() from Http1Error("the agent was closed")
        try:
            async with asyncio.timeout(self.connect_timeout):
                factory: Callable[[], _Connection] = lambda: _Connection(loop)  # noqa: E731
                infos = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
                sock = await aiohappyeyeballs.start_connection(infos, happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY,
                                                               interleave=1)
                try:
                    _, conn = await loop.create_connection(factory, sock=sock, ssl=self.ssl,
                                                           server_hostname=self.host if self.ssl else None)
                except BaseException:
                    sock.close()
                    raise
        except TimeoutError as exc:
            raise UpstreamTimedOut() from exc
        except OSError as exc:
            raise UpstreamConnectionError() from exc
        self._open.add(conn)
        return conn

    def _free_slot(self) -> None:
        while self._slots:
            waiter = self._slots.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _sweep(self) -> None:
        """Close the connections idle longer than ``keepalive``; look again while any are left."""
        self._sweeper = None
        if not self._idle:
            return
        loop = self._idle[0].loop
        now = loop.time()
        keep = []
        for conn in self._idle:
            if conn.lost or now - conn.idle_since >= self.keepalive:
                conn.close()
                self.forget(conn)
            else:
                keep.append(conn)
        self._idle = keep
        if keep:
            self._sweeper = loop.call_later(self.keepalive, self._sweep)
