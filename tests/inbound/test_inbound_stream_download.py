"""``hermes_gateway.stream_download`` against a real server on 127.0.0.1: never more than the cap, every failure a FetchError.

The server is aiohttp for the well-formed answers (a sized file, a chunked
one, error statuses, a stall) and a raw socket for what aiohttp will not
send: a ``Content-Length`` that lies.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from hermes_gateway import FetchError, stream_download
from hermes_gateway.testing import serve_locally

SECRET_PATH = "/file/bot123456:SECRET-TOKEN/photo.jpg"


class Files:
    """A file server whose every route is one way a platform's file host answers; it logs what it was asked."""

    def __init__(self) -> None:
        self.requests: list[web.Request] = []
        self.released = asyncio.Event()
        app = web.Application()
        app.router.add_get("/sized/{n}", self.sized)
        app.router.add_get("/chunked/{n}", self.chunked)
        app.router.add_get("/status/{code}", self.status)
        app.router.add_get("/stall", self.stall)
        app.router.add_get(SECRET_PATH, self.status)
        self.app = app

    async def sized(self, request: web.Request) -> web.Response:
        self.requests.append(request)
        return web.Response(body=b"x" * int(request.match_info["n"]), content_type="image/png")

    async def chunked(self, request: web.Request) -> web.StreamResponse:
        """``n`` bytes in 1000-byte writes with no Content-Length (until the client hangs up)."""
        self.requests.append(request)
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        total = int(request.match_info["n"])
        sent = 0
        try:
            while sent < total:
                await response.write(b"y" * 1000)
                sent += 1000
            await response.write_eof()
        except (ConnectionError, RuntimeError):
            pass
        return response

    async def status(self, request: web.Request) -> web.Response:
        self.requests.append(request)
        return web.Response(status=int(request.match_info.get("code", 404)), text="<html>nope</html>")

    async def stall(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(request)
        response = web.StreamResponse(headers={"Content-Length": "100"})
        await response.prepare(request)
        await response.write(b"z" * 10)
        await self.released.wait()
        return response


@pytest.fixture
async def files() -> AsyncIterator[tuple[Files, str]]:
    server = Files()
    runner = await serve_locally(server.app)
    try:
        yield server, f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        server.released.set()
        await runner.cleanup()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_read=10)) as s:
        yield s


async def collect(stream: AsyncIterator[bytes], got: list[bytes] | None = None) -> bytes:
    got = [] if got is None else got
    async for chunk in stream:
        got.append(chunk)
    return b"".join(got)


async def test_a_file_within_its_declared_size_arrives_whole_in_chunks(files, session):
    server, base = files
    data = await collect(stream_download(session, f"{base}/sized/200000", what="the photo", declared_size=200000,
                                         max_bytes=10**6, chunk_bytes=4096))
    assert data == b"x" * 200000


async def test_nothing_is_requested_until_the_stream_is_iterated(files, session):
    server, base = files
    stream = stream_download(session, f"{base}/sized/10", what="the photo")
    assert server.requests == []
    assert await collect(stream) == b"x" * 10 and len(server.requests) == 1


@pytest.mark.parametrize("cap", ["declared_size", "max_bytes"])
async def test_a_content_length_over_the_cap_is_refused_before_a_byte_is_read(files, session, cap):
    server, base = files
    got: list[bytes] = []
    with pytest.raises(FetchError, match=r"the photo is 5000 bytes, more than the 1000 .*; not downloaded"):
        await collect(stream_download(session, f"{base}/sized/5000", what="the photo", **{cap: 1000}), got)
    assert got == []


@pytest.mark.parametrize("cap", ["declared_size", "max_bytes"])
async def test_a_chunked_body_running_past_the_cap_is_cut_off(files, session, cap):
    server, base = files
    got: list[bytes] = []
    with pytest.raises(FetchError, match=r"the file ran past the 2500 bytes .*; download stopped"):
        await collect(stream_download(session, f"{base}/chunked/1000000", what="the file", chunk_bytes=1000,
                                      **{cap: 2500}), got)
    assert sum(map(len, got)) <= 2500, "never more than the cap reaches the caller"


async def test_the_smaller_of_the_declared_size_and_the_limit_wins(files, session):
    server, base = files
    with pytest.raises(FetchError, match="more than the 300 declared"):
        await collect(stream_download(session, f"{base}/sized/400", what="f", declared_size=300, max_bytes=10**6))
    with pytest.raises(FetchError, match="more than the 300 allowed"):
        await collect(stream_download(session, f"{base}/sized/400", what="f", declared_size=10**6, max_bytes=300))


async def raw_server(answer: bytes) -> tuple[asyncio.AbstractServer, str]:
    """A server that reads the request head, writes ``answer`` as it is, and closes: HTTP that lies."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/lie"


async def test_a_content_length_promising_more_than_arrives_is_a_fetch_error(session):
    server, url = await raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 900\r\n\r\n" + b"a" * 100)
    async with server:
        with pytest.raises(FetchError, match=r"the file could not be downloaded \(ClientPayloadError\)"):
            await collect(stream_download(session, url, what="the file", declared_size=1000))


async def test_a_content_length_under_the_cap_with_more_bytes_behind_it_hands_over_no_more_than_it(session):
    """The HTTP framing ends the body at the Content-Length; the garbage behind it may fail the read, never pass."""
    server, url = await raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n" + b"b" * 5000)
    got: list[bytes] = []
    async with server:
        try:
            await collect(stream_download(session, url, what="the file", declared_size=1000), got)
        except FetchError as exc:
            assert str(exc).startswith("the file could not be downloaded (")
    assert b"".join(got) == b"b" * len(b"".join(got)) and len(b"".join(got)) <= 500


@pytest.mark.parametrize("code, note", [(403, "its link expired"), (404, "its link expired"), (410, None),
                                        (429, None), (500, None), (503, None)])
async def test_an_error_status_is_a_fetch_error_naming_it(files, session, code, note):
    server, base = files
    notes = {403: "its link expired", 404: "its link expired"}
    expected = f"the file could not be downloaded: HTTP {code}" + (f" ({note})" if note else "")
    with pytest.raises(FetchError) as caught:
        await collect(stream_download(session, f"{base}/status/{code}", what="the file", status_notes=notes))
    assert str(caught.value) == expected


async def test_a_stalled_download_ends_in_a_fetch_error_after_the_read_timeout(files, session):
    server, base = files
    got: list[bytes] = []
    started = asyncio.get_running_loop().time()
    with pytest.raises(FetchError, match=r"the file could not be downloaded \((Server|Socket)?TimeoutError\)"):
        await collect(stream_download(session, f"{base}/stall", what="the file",
                                      timeout=aiohttp.ClientTimeout(total=None, sock_read=0.3)), got)
    assert b"".join(got) == b"z" * 10, "what arrived before the stall was handed over"
    assert asyncio.get_running_loop().time() - started < 10, "the request's timeout, not the session's 10 s"


async def test_a_refused_connection_is_a_fetch_error(session):
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    with pytest.raises(FetchError, match=r"the file could not be downloaded \(Client\w*Error\)"):
        await collect(stream_download(session, f"http://127.0.0.1:{port}/gone", what="the file"))


async def test_no_error_quotes_the_url_that_carries_the_token(files, session):
    server, base = files
    for url in (f"{base}{SECRET_PATH}", f"http://127.0.0.1:1{SECRET_PATH}"):
        with pytest.raises(FetchError) as caught:
            await collect(stream_download(session, url, what="the file"))
        assert "SECRET" not in str(caught.value) and "bot123456" not in str(caught.value)


async def test_headers_go_with_the_request_and_check_may_refuse_before_the_body(files, session):
    server, base = files

    def not_html(response: aiohttp.ClientResponse) -> None:
        if response.content_type == "image/png":
            raise FetchError("the file is a PNG after all")

    with pytest.raises(FetchError, match="a PNG after all"):
        await collect(stream_download(session, f"{base}/sized/10", what="f", headers={"Authorization": "Bearer t"},
                                      check=not_html))
    assert server.requests[-1].headers["Authorization"] == "Bearer t"
