"""``serve_file``: an emulator's download route streams the bytes a test declared, and logs what went out."""

from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web

from hermes_gateway.testing import eventually, serve_file, serve_locally


async def serving(**options) -> tuple[web.AppRunner, str, list[int]]:
    log: list[int] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        return await serve_file(request, b"DATA", sent=log.append, **options)

    app = web.Application()
    app.router.add_get("/f", handle)
    runner = await serve_locally(app)
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/f", log


async def test_the_data_then_zeros_up_to_the_declared_size_with_its_content_length():
    runner, url, log = await serving(size=200_000, content_type="image/png", headers={"Cache-Control": "no-store"},
                                     chunk_bytes=4096)
    try:
        async with aiohttp.ClientSession() as http, http.get(url) as response:
            body = await response.read()
            assert (response.status, response.content_length, response.content_type) == (200, 200_000, "image/png")
            assert response.headers["Cache-Control"] == "no-store"
    finally:
        await runner.cleanup()
    assert body == b"DATA" + bytes(200_000 - 4) and log == [200_000]


async def test_chunked_has_no_content_length_and_the_data_alone_by_default():
    runner, url, log = await serving(chunked=True)
    try:
        async with aiohttp.ClientSession() as http, http.get(url) as response:
            assert response.content_length is None and response.headers["Transfer-Encoding"] == "chunked"
            assert await response.read() == b"DATA"
    finally:
        await runner.cleanup()
    assert log == [4]


async def test_a_client_that_hangs_up_during_a_stall_is_logged_with_what_it_got():
    runner, url, log = await serving(size=300_000, stall=0.5)
    try:
        async with aiohttp.ClientSession() as http, http.get(url) as response:
            first = await response.content.readexactly(64 * 1024)
            assert first.startswith(b"DATA")
            response.close()  # the client gives up on the stalled download
        await eventually(lambda: bool(log), lambda: log, timeout=10)  # the next write, after the stall, fails
    finally:
        await runner.cleanup()
    assert log == [64 * 1024], "the first chunk went out, then the stall, then the hang-up"


async def test_the_log_gets_one_entry_per_request():
    runner, url, log = await serving()
    try:
        async with aiohttp.ClientSession() as http:
            await asyncio.gather(*(http.get(url) for _ in range(3)))
    finally:
        await runner.cleanup()
    assert log == [4, 4, 4]
