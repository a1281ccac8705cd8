"""A hook's body read as it streams in: at most ``max_bytes``, within a deadline, or refused before the rest.

aiohttp's own bound (``client_max_size``) is the API server's, far above a
hook's, and applies only to ``request.read()``; here the body is taken
chunk by chunk, so a sender announcing (or sending) more than the hook's
``max_bytes`` is answered 413 when the count is passed (at once, for an
announced ``Content-Length``) and its connection is closed: the rest is
never read into memory. A body that does not arrive within
:data:`~...http.body_deadline.BODY_SECONDS` is a 408, as for the platforms' webhooks.
"""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from ...http.body_deadline import BODY_SECONDS
from ...http.errors import ApiError

CHUNK = 65_536


def too_large(max_bytes: int) -> ApiError:
    return ApiError(413, f"The body is larger than this hook accepts ({max_bytes:,} bytes; hooks[].max_bytes).",
                    code="body_too_large", headers={"Connection": "close"})


async def read_bounded(request: web.Request, max_bytes: int, deadline: float = BODY_SECONDS) -> bytes:
    """The whole body, or :class:`ApiError` 413 (over ``max_bytes``) / 408 (not arrived in time)."""
    announced = request.content_length
    if announced is not None and announced > max_bytes:
        raise too_large(max_bytes)
    loop = asyncio.get_running_loop()
    until = loop.time() + deadline
    parts: list[bytes] = []
    size = 0
    while True:
        try:
            chunk = await asyncio.wait_for(request.content.read(CHUNK), max(0.0, until - loop.time()))
        except asyncio.TimeoutError:
            raise ApiError(408, f"The request body did not arrive within {deadline:g} s.", code="request_timeout",
                           headers={"Connection": "close"}) from None
        except (ConnectionError, HttpProcessingError) as exc:  # the sender hung up, or garbled its chunks
            raise ApiError(400, "The request body was cut off or malformed.", code="body_unreadable",
                           headers={"Connection": "close"}) from exc
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > max_bytes:
            raise too_large(max_bytes)
        parts.append(chunk)
