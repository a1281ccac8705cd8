"""The lean HTTP/1.1 client (:mod:`hermes_gateway._core.agent.http1`) against a raw socket server on 127.0.0.1.

What the upstream receives and when, how each kind of body is read, and which connections are reused.
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import ssl
import threading

import pytest
import trustme

from hermes_gateway._core.agent.errors import UpstreamConnectionError
from hermes_gateway._core.agent.http1 import Http1Pool, render_head
from hermes_gateway._core.agent.limits import UpstreamTooLarge

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def request(port: int, body: bytes = b'{"n": 1}') -> bytes:
    head = render_head("POST", "/v1/chat", {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json"})
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


class Server:
    """A listening socket whose connections the test reads and answers by hand (in threads: plain sockets)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.loop = asyncio.get_running_loop()

    async def accept(self) -> socket.socket:
        conn, _ = await self.loop.run_in_executor(None, self.listener.accept)
        return conn

    async def read_request(self, conn: socket.socket) -> bytes:
        def read() -> bytes:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            while len(body) < length:
                body += conn.recv(65536)
            return data
        return await self.loop.run_in_executor(None, read)

    async def requested(self, pool: Http1Pool) -> tuple[asyncio.Future, socket.socket]:
        """A request sent on a new connection of ``pool``: the task awaiting its response, and the server's
        side of the connection with the request read."""
        task = asyncio.ensure_future(pool.request(request(self.port)))
        conn = await self.accept()
        await self.read_request(conn)
        return task, conn

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
async def server():
    s = Server()
    yield s
    s.close()


def pool_for(server: Server, **options: object) -> Http1Pool:
    return Http1Pool("127.0.0.1", server.port, ssl=None, connect_timeout=2.0, **options)  # type: ignore[arg-type]


async def test_a_request_on_a_pooled_connection_is_out_when_the_posting_step_ends(server: Server) -> None:
    """A burst's upstream calls first (issue 28): nothing queued behind other tasks before the bytes leave."""
    pool = pool_for(server)
    first = asyncio.ensure_future(pool.request(request(server.port)))
    conn = await server.accept()
    try:
        await server.read_request(conn)
        conn.sendall(OK)
        assert await (await first).read() == b"ok"  # the connection goes back to the pool
        second = asyncio.ensure_future(pool.request(request(server.port, b'{"n": 2}')))
        await asyncio.sleep(0)  # the posting task's first step: up to waiting for the response
        seen = conn.recv(65536, socket.MSG_DONTWAIT)
        assert seen.startswith(b"POST /v1/chat HTTP/1.1\r\n") and seen.endswith(b'{"n": 2}')
        conn.sendall(OK)
        assert await (await second).read() == b"ok"
    finally:
        conn.close()
        await pool.aclose()


async def test_a_chunked_stream_is_read_as_it_arrives_and_its_connection_reused(server: Server) -> None:
    pool = pool_for(server)
    task = asyncio.ensure_future(pool.request(request(server.port)))
    conn = await server.accept()
    try:
        await server.read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"5\r\ndata:\r\n")
        response = await task
        assert response.status == 200 and response.headers["content-type"] == "text/event-stream"
        assert await response.read_chunk() == b"data:"
        conn.sendall(b"3\r\n 1\n\r\n")
        assert await response.read_chunk() == b" 1\n"
        assert not response.at_eof()
        conn.sendall(b"0\r\n\r\n")
        assert await response.read_chunk() == b""
        assert response.at_eof()
        response.release()
        again = asyncio.ensure_future(pool.request(request(server.port)))
        await server.read_request(conn)  # the same connection: no new accept
        conn.sendall(OK)
        assert await (await again).read() == b"ok"
        assert len(pool._open) == 1
    finally:
        conn.close()
        await pool.aclose()


async def test_a_body_that_ends_with_the_connection_is_read_whole_and_not_reused(server: Server) -> None:
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n")
    response = await task
    conn.sendall(b"data: 2\n\n")
    conn.close()
    assert await response.read() == b"data: 1\n\ndata: 2\n\n"
    assert not pool._idle and not pool._open
    await pool.aclose()


async def test_a_connection_lost_mid_body_is_a_mid_stream_connection_error(server: Server) -> None:
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
    response = await task
    assert await response.read_chunk() == b"partial"
    conn.close()
    with pytest.raises(UpstreamConnectionError) as caught:
        await response.read_chunk()
    assert caught.value.mid_stream
    assert not pool._open
    await pool.aclose()


async def test_a_connection_lost_before_the_headers_is_a_connection_error(server: Server) -> None:
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    conn.close()
    with pytest.raises(UpstreamConnectionError) as caught:
        await task
    assert not caught.value.mid_stream
    await pool.aclose()


async def _kept_alive(server: Server, pool: Http1Pool) -> socket.socket:
    """One request answered on a new connection of ``pool``, now idle in it: the server's side of it."""
    task, conn = await server.requested(pool)
    conn.sendall(OK)
    assert await (await task).read() == b"ok"
    assert len(pool._idle) == 1
    return conn


async def test_a_reused_connection_closed_before_any_byte_of_the_response_is_replaced_at_once(
        server: Server) -> None:
    """The upstream's idle timeout and our reuse cross on the wire: the request goes again on a new connection."""
    pool = pool_for(server)
    old = await _kept_alive(server, pool)
    task = asyncio.ensure_future(pool.request(request(server.port, b'{"n": 2}')))
    assert (await server.read_request(old)).endswith(b'{"n": 2}')
    old.close()  # closed with the request unanswered
    new = await server.accept()
    assert (await server.read_request(new)).endswith(b'{"n": 2}')  # sent again, without a retry's delay
    new.sendall(OK)
    assert await (await task).read() == b"ok"
    new.close()
    await pool.aclose()


async def test_a_reused_connection_that_began_its_answer_and_closed_is_an_error_not_sent_again(
        server: Server) -> None:
    pool = pool_for(server)
    old = await _kept_alive(server, pool)
    task = asyncio.ensure_future(pool.request(request(server.port)))
    await server.read_request(old)
    old.sendall(b"HTTP/1.1 200 OK\r\nContent-")
    old.close()
    with pytest.raises(UpstreamConnectionError):
        await task
    server.listener.settimeout(0.3)
    with pytest.raises(socket.timeout):
        server.listener.accept()  # no second connection: the upstream had begun to answer
    await pool.aclose()


async def test_a_malformed_response_is_a_connection_error(server: Server) -> None:
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    conn.sendall(b"NOT HTTP AT ALL\r\n\r\n")
    with pytest.raises(UpstreamConnectionError):
        await task
    conn.close()
    await pool.aclose()


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
async def test_a_compressed_body_is_refused_never_decoded(server: Server, coding: str) -> None:
    """Compression is never asked for (identity); an upstream that compresses anyway (a bomb) is refused."""
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    packed = gzip.compress(b'{"answer": 42}')
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n\r\n" % (coding.encode(), len(packed))
                 + packed)
    with pytest.raises(UpstreamConnectionError) as caught:
        await task
    assert isinstance(caught.value.__cause__, UpstreamTooLarge)
    assert "compressed" in str(caught.value.__cause__)
    conn.close()
    await pool.aclose()


async def _sender(conn: socket.socket, head: bytes, piece: bytes, *, stop: threading.Event) -> int:
    """Send ``head`` then ``piece`` over and over until the client hangs up (or 64 MiB); the bytes sent."""
    def send() -> int:
        sent = 0
        try:
            conn.sendall(head)
            while not stop.is_set() and sent < 64 << 20:
                conn.sendall(piece)
                sent += len(piece)
        except OSError:
            pass
        return sent
    return await asyncio.get_running_loop().run_in_executor(None, send)


@pytest.mark.parametrize("endless", ["fields", "one value"])
async def test_an_endless_head_is_refused_at_its_bound(server: Server, endless: str) -> None:
    """Headers that never end (or one value that never ends) stop at 64 KiB / 100 fields: the connection closes."""
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    stop = threading.Event()
    piece = b"X-More: yes\r\n" if endless == "fields" else b"a" * 1024
    head = b"HTTP/1.1 200 OK\r\n" if endless == "fields" else b"HTTP/1.1 200 OK\r\nX-Long: "
    sending = asyncio.ensure_future(_sender(conn, head, piece, stop=stop))
    with pytest.raises(UpstreamConnectionError) as caught:
        await asyncio.wait_for(task, 30)
    stop.set()
    sent = await sending
    assert isinstance(caught.value.__cause__, UpstreamTooLarge)
    assert sent < 8 << 20  # the client hung up early: the sender did not get to 64 MiB
    conn.close()
    await pool.aclose()


async def test_a_head_of_100_fields_and_under_64_kib_is_read(server: Server) -> None:
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    fields = b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 500) for i in range(99))
    conn.sendall(b"HTTP/1.1 200 OK\r\n" + fields + b"Content-Length: 2\r\n\r\nok")
    response = await task
    assert len(response.headers) == 100
    assert await response.read() == b"ok"
    conn.close()
    await pool.aclose()


async def test_informational_heads_are_skipped(server: Server) -> None:
    """103 Early Hints and 100 Continue come before the answer's own head: the answer is what counts."""
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                 b"HTTP/1.1 100 Continue\r\n\r\n")
    await asyncio.sleep(0)
    conn.sendall(OK)
    response = await task
    assert (response.status, "link" in response.headers) == (200, False)
    assert await response.read() == b"ok"
    assert len(pool._idle) == 1  # the connection is kept: the answer was read whole
    conn.close()
    await pool.aclose()


async def test_an_unasked_second_response_does_not_spoil_the_first(server: Server) -> None:
    """A kept-alive connection whose upstream sends a second response nobody asked for, in the same bytes as
    the first's end: the first answer stands (the SDK's httpx reads it so), the connection is not reused."""
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\n{\"answer\": 42}"
                 b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{\"no\": 0}")
    response = await task
    assert response.status == 200
    assert await response.read() == b'{"answer": 42}'
    assert pool._idle == []
    conn.close()
    await pool.aclose()


async def test_a_non_streamed_body_past_its_bound_is_refused(server: Server) -> None:
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    stop = threading.Event()
    sending = asyncio.ensure_future(_sender(conn, b"HTTP/1.1 200 OK\r\n\r\n", b"x" * 65536, stop=stop))
    response = await task
    with pytest.raises(UpstreamConnectionError) as caught:
        await response.read(limit=1 << 20)
    stop.set()
    assert isinstance(caught.value.__cause__, UpstreamTooLarge)
    assert await sending < 8 << 20
    conn.close()
    await pool.aclose()


async def test_a_cancelled_read_closes_the_connection(server: Server) -> None:
    """The upstream sees the client go (which stops the model), and the connection is never reused."""
    pool = pool_for(server)
    task, conn = await server.requested(pool)
    conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    response = await task
    reading = asyncio.ensure_future(response.read_chunk())
    await asyncio.sleep(0.05)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    conn.settimeout(2)
    assert conn.recv(10) == b""  # closed by the client
    assert not pool._open and not pool._idle
    conn.close()
    await pool.aclose()


async def test_a_refused_connection_and_a_connect_timeout() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pool = Http1Pool("127.0.0.1", port, ssl=None, connect_timeout=2.0)
    with pytest.raises(UpstreamConnectionError) as refused:
        await pool.request(request(port))
    assert isinstance(refused.value.__cause__, ConnectionRefusedError)
    await pool.aclose()


async def test_beyond_the_limit_a_request_waits_in_turn_past_the_connect_timeout(server: Server) -> None:
    """A burst of more replies than connections queues for them (the agent's first-token deadline bounds the wait):
    the connect timeout bounds connecting, not the queue (10,000 chats at once failed their last turns so)."""
    pool = pool_for(server, limit=1)
    pool.connect_timeout = 0.05
    first = asyncio.ensure_future(pool.request(request(server.port)))
    conn = await server.accept()
    await server.read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    response = await first  # holds the only connection
    gave_up = asyncio.ensure_future(pool.request(request(server.port)))  # its caller stops waiting: no slot kept
    waiting = asyncio.ensure_future(pool.request(request(server.port)))
    await asyncio.sleep(0.2)  # four connect timeouts
    assert not waiting.done()
    gave_up.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gave_up
    conn.sendall(b"0\r\n\r\n")
    assert await response.read() == b""  # released: the waiting request gets the same connection
    await server.read_request(conn)
    conn.sendall(OK)
    assert await (await waiting).read() == b"ok"
    conn.close()
    await pool.aclose()


async def test_idle_connections_are_closed_after_the_keepalive(server: Server) -> None:
    pool = pool_for(server, keepalive=0.2)
    task, conn = await server.requested(pool)
    conn.sendall(OK)
    assert await (await task).read() == b"ok"
    assert len(pool._idle) == 1
    await asyncio.sleep(0.5)
    assert not pool._idle and not pool._open
    conn.settimeout(2)
    assert conn.recv(10) == b""
    conn.close()
    await pool.aclose()


def test_a_header_that_could_smuggle_another_is_refused() -> None:
    with pytest.raises(ValueError, match="X-Evil"):
        render_head("POST", "/", {"X-Evil": "a\r\nInjected: 1"})


async def _tls_upstream(ca: trustme.CA) -> tuple[asyncio.Server, int]:
    """An HTTPS server on 127.0.0.1 with a certificate of ``ca`` that answers every request with ``ok``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                await reader.readexactly(length)
                writer.write(OK)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    return server, server.sockets[0].getsockname()[1]


async def test_https_with_the_upstreams_certificate_verified() -> None:
    ca = trustme.CA()
    server, port = await _tls_upstream(ca)
    trusting = ssl.create_default_context()
    ca.configure_trust(trusting)
    pool = Http1Pool("127.0.0.1", port, ssl=trusting, connect_timeout=2.0)
    try:
        for _ in range(2):  # the second on the same (kept-alive) TLS connection
            assert await (await pool.request(request(port))).read() == b"ok"
        assert len(pool._open) == 1
        stranger = Http1Pool("127.0.0.1", port, ssl=ssl.create_default_context(), connect_timeout=2.0)
        with pytest.raises(UpstreamConnectionError) as caught:  # a certificate nobody vouches for: refused
            await stranger.request(request(port))
        assert isinstance(caught.value.__cause__, ssl.SSLCertVerificationError)
        await stranger.aclose()
    finally:
        await pool.aclose()
        server.close()
        await server.wait_closed()


async def test_an_address_that_does_not_answer_costs_a_quarter_second_not_the_connect_timeout(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Happy Eyeballs (aiohappyeyeballs, as aiohttp): the host's first address swallows the SYN (a listener
    whose accept queue is full), the second answers; the request goes out on the second well within the
    connect timeout, where trying the addresses one after another would spend all of it on the first."""
    blackhole = socket.create_server(("127.0.0.1", 0), backlog=0)
    filler = []
    for _ in range(4):  # fill its accept queue: from then on its SYNs are dropped, a connect just waits
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(blackhole.getsockname())
        filler.append(s)
    loop = asyncio.get_running_loop()
    addresses = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", blackhole.getsockname()),
                 (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", server.port))]

    async def resolve(host: str, port: int, **kwargs: object) -> list:
        assert host == "upstream.test"
        return addresses

    monkeypatch.setattr(loop, "getaddrinfo", resolve)
    pool = Http1Pool("upstream.test", server.port, ssl=None, connect_timeout=10.0)
    task = asyncio.ensure_future(pool.request(request(server.port)))
    conn = await server.accept()
    await server.read_request(conn)
    conn.sendall(OK)
    assert await (await asyncio.wait_for(task, 5)).read() == b"ok"
    conn.close()
    await pool.aclose()
    for s in filler:
        s.close()
    blackhole.close()
