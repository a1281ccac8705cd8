"""One access-log line per request: method, path, status, time to first token, duration.

Logged at INFO on ``hermes_gateway.access``, so it is off by default and on
with ``hermes-gateway -v run``. The line never carries a body, a query
string or a header (keys travel in ``Authorization``; a query may carry
one too). A stream's status is 200 and its duration is the whole stream;
a client that went away is logged as 499.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable

from aiohttp import web
from aiohttp.typedefs import Handler

log = logging.getLogger("hermes_gateway.access")

#: Where a handler records when the first text went out (loop time), for the access line.
FIRST_TOKEN_AT: Any = web.RequestKey("hermes_first_token_at", float) if hasattr(web, "RequestKey") \
    else "hermes_first_token_at"


@web.middleware
def access_log(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
    """The request, logged when INFO is on; otherwise its handler's own coroutine, with no frame of this
    middleware in the way (aiohttp awaits what a middleware returns)."""
    if not log.isEnabledFor(logging.INFO):
        return handler(request)
    return _logged(request, handler)


async def _logged(request: web.Request, handler: Handler) -> web.StreamResponse:
    loop = asyncio.get_running_loop()
    started = loop.time()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    except asyncio.CancelledError:
        status = 499  # the client closed the connection (nginx's convention)
        raise
    finally:
        now = loop.time()
        first = request.get(FIRST_TOKEN_AT)
        ttft = f"{(first - started) * 1e3:.1f}ms" if first is not None else "-"
        path = request.rel_url.raw_path  # percent-encoded (no newline can forge a line), no query string
        if len(path) > 200:
            path = path[:200] + "..."
        log.info("%s %s %d ttft=%s duration=%.1fms", request.method, path, status, ttft, (now - started) * 1e3)
