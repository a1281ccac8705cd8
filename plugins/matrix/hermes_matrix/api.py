"""mautrix's HTTP layer with the two things a gateway needs that it drops: a 429's wait, and per-call timeouts.

mautrix turns ``M_LIMIT_EXCEEDED`` into ``MLimitExceeded`` but keeps neither
the body's ``retry_after_ms`` nor the ``Retry-After`` header (``HTTPAPI._send``
in mautrix 0.21), so the core could not wait the time the homeserver asked
for. :class:`GatewayHTTPAPI` overrides that one method: a non-2xx answer
becomes mautrix's own error (``make_request_error``), and a 429 is
:class:`RateLimitedError`, which carries the wait in seconds. It also gives
``/sync`` its long-poll time plus a margin and every other call
``request_timeout``. The plugin never retries here (``default_retry_count=0``):
the core decides.
"""

from __future__ import annotations

import json
import math
from typing import Any

import aiohttp
from mautrix.api import HTTPAPI
from mautrix.errors import MLimitExceeded, make_request_error

#: Seconds to wait after a 429 that says nothing of when to come back (matrix-nio waits the same).
DEFAULT_RETRY_AFTER = 5.0
#: Seconds a long-poll ``/sync`` may take beyond the ``timeout`` it asked the server for.
SYNC_MARGIN = 30.0
#: What an error body may be at most before it is no longer read (a hostile server's endless error page).
MAX_ERROR_BODY = 64 * 1024


class RateLimitedError(MLimitExceeded):
    """``M_LIMIT_EXCEEDED`` (HTTP 429) with the wait the homeserver asked for, in seconds."""

    def __init__(self, http_status: int, message: str, retry_after: float) -> None:
        super().__init__(http_status, message)
        self.retry_after = retry_after


def retry_after_of(body: Any, header: str | None) -> float:
    """The wait of a 429: ``retry_after_ms`` from the body (Synapse sends both), else ``Retry-After``."""
    if isinstance(body, dict):
        ms = body.get("retry_after_ms")
        if isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms) and ms >= 0:
            return ms / 1000
    if header is not None:
        try:
            seconds = float(header)
        except ValueError:
            seconds = -1
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return DEFAULT_RETRY_AFTER


class GatewayHTTPAPI(HTTPAPI):
    """``HTTPAPI`` whose 429s carry their wait and whose calls are bounded in time."""

    def __init__(self, *args: Any, request_timeout: float, sync_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, default_retry_count=0, **kwargs)
        self.request_timeout = request_timeout
        self.sync_timeout = sync_timeout

    async def _send(self, method: Any, url: Any, content: Any, query_params: dict[str, str],
                    headers: dict[str, str]) -> tuple[Any, aiohttp.ClientResponse]:
        seconds = self.request_timeout
        if str(url.path).endswith("/sync"):
            seconds = self.sync_timeout + SYNC_MARGIN
        request = self.session.request(str(method), url, data=content, params=query_params, headers=headers,
                                       timeout=aiohttp.ClientTimeout(total=seconds))
        async with request as response:
            if 200 <= response.status < 300:
                return await response.json(content_type=None), response
            raw = await response.content.read(MAX_ERROR_BODY)
            text = raw.decode("utf-8", "replace")
            try:
                body = json.loads(text)
            except ValueError:
                body = None
            errcode = body.get("errcode") if isinstance(body, dict) else None
            message = body.get("error") if isinstance(body, dict) else None
            if response.status == 429 or errcode == "M_LIMIT_EXCEEDED":
                raise RateLimitedError(response.status, str(message or "Too Many Requests"),
                                       retry_after_of(body, response.headers.get("Retry-After")))
            raise make_request_error(http_status=response.status, text=text[:500],
                                     errcode=errcode if isinstance(errcode, str) else None,
                                     message=message if isinstance(message, str) else None)
