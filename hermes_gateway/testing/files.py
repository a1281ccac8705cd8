"""Serving a file a person sent, as a platform's file host does: for every emulator's download route.

Each emulator (Telegram's file server, WhatsApp's media server, Discord's
CDN, Slack's ``url_private``) decides on its own whether a request may have
a file — its token, its signature, its expiry — and then serves the bytes
the same way, which lives here once: :func:`serve_file` streams them in
chunks with a ``Content-Length`` (or chunked, without one), zeros past the
data up to the size a test declared (so a "600 MB" file is never held),
an optional stall mid-file, and reports how many bytes went out even when
the client hung up, so the emulator logs every download a test asserts on.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Mapping

from aiohttp import web

#: Bytes written at a time.
SERVE_CHUNK = 64 * 1024


async def serve_file(request: web.Request, data: bytes | None, *, sent: Callable[[int], None],
                     size: int | None = None, content_type: str = "application/octet-stream",
                     headers: Mapping[str, str] | None = None, chunked: bool = False, stall: float = 0.0,
                     chunk_bytes: int = SERVE_CHUNK) -> web.StreamResponse:
    """Answer ``request`` with ``data`` (HTTP 200), then zeros up to ``size`` bytes, in chunks.

    ``size``: how many bytes go out (default ``len(data)``; ``data`` None:
    zeros only); larger than the data, the rest is zeros made chunk by chunk.
    ``chunked``: no ``Content-Length`` (chunked transfer encoding).
    ``stall``: seconds of silence after the first chunk (a download that
    goes quiet). ``sent(n)`` is called once with the bytes written, also
    when the client went away mid-file (which ends the answer quietly).
    """
    data = data or b""
    total = len(data) if size is None else max(size, len(data))
    response = web.StreamResponse(status=200, headers={**(headers or {}), "Content-Type": content_type})
    if chunked:
        response.enable_chunked_encoding()
    else:
        response.content_length = total
    written = 0
    try:
        await response.prepare(request)
        while written < total:
            end = min(written + chunk_bytes, total)
            chunk = data[written:end]
            chunk += bytes(end - written - len(chunk))  # zeros past the data: a large file is never held
            await response.write(chunk)
            first, written = written == 0, end
            if stall and first:
                await asyncio.sleep(stall)  # the download goes quiet mid-file
        await response.write_eof()
    except ConnectionError:
        pass  # the client hung up mid-file (gave up on a stall, refused the size): the log says how far it got
    finally:
        sent(written)
    return response
