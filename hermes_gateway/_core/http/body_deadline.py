"""A webhook's body arrives within a deadline, or the request is answered 408: no sender holds a handler open.

aiohttp bounds a body's size (``client_max_size``) but not how long it may
take to arrive: a sender that announces a ``Content-Length`` and then sends
nothing more (a lying or a slow-loris client) keeps the platform's handler
waiting in ``request.read()`` for as long as it keeps the connection open.
For the platforms' webhook routes (``/webhooks/...``) the body is read here
first, within :data:`BODY_SECONDS`; the handler's own ``read()`` then gets
the same bytes at once (aiohttp keeps them). A body that does not arrive in
time is a 408 (in the listener's error shape, as the API's own deadline in
``api_server.validation`` answers) and the connection is closed; nothing
reaches the platform. A multipart body is left to its handler (it is read
as a stream).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable

from aiohttp import web

from .disconnect import Handler
from .listener import json_error_response

log = logging.getLogger(__name__)

#: Seconds a webhook's whole body may take to arrive (platforms post a few kilobytes at once).
BODY_SECONDS = 30.0
WEBHOOK_PREFIX = "/webhooks/"


@web.middleware
def webhook_body_deadline(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
    """Read a webhook's body within :data:`BODY_SECONDS` before its handler runs; 408 when it does not come.

    Every other request goes straight to its handler, with no frame of this middleware: aiohttp awaits
    what a middleware returns, so the common case returns the handler's own coroutine.
    """
    if request.path.startswith(WEBHOOK_PREFIX) and request.can_read_body \
            and not request.content_type.startswith("multipart/"):
        return _within_deadline(request, handler)
    return handler(request)


async def _within_deadline(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The webhook's body read first, within :data:`BODY_SECONDS`; then its handler, or the 408."""
    try:
        await asyncio.wait_for(request.read(), BODY_SECONDS)
    except asyncio.TimeoutError:
        log.info("refused a request to %s whose body did not arrive within %gs", request.path, BODY_SECONDS)
        response = json_error_response(408, f"The request body did not arrive within {BODY_SECONDS:g} s.",
                                       code="request_timeout", headers={"Connection": "close"})
        await response.prepare(request)
        await response.write_eof()
        request.protocol.force_close()  # now, not after aiohttp's lingering wait for the rest of the body
        return response
    return await handler(request)
