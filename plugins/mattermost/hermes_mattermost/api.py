"""The REST API v4, on aiohttp: one session per client, every call translated by :mod:`.errors`.

Why aiohttp and not ``mattermostdriver``: the driver is unmaintained (last
release 2022), is synchronous at heart (its async variant wraps ``aiohttp``
anyway), retries nothing we could not do better and hides the response
headers this plugin needs (``X-Ratelimit-*``). The dozen calls the plugin
makes are plain JSON over HTTP; aiohttp is already the gateway's.

Rate-limit headers: every answer's ``X-Ratelimit-Limit``, ``-Remaining``
and ``-Reset`` are kept. When the server said none remain, a call made
before the next one is allowed is refused here as ``RateLimited`` (scope
bot) without reaching the server: it would only earn a 429. Mattermost's
limiter is a GCRA: with none remaining the next call is allowed one
emission interval later, and Reset (the seconds until the whole burst is
back, rounded up) over Limit (the burst) is that interval or a little
more. The core then waits, as it does for a 429.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Mapping

import aiohttp

from hermes_gateway import DeliveryError, RateLimited

from .errors import failed, refused
from .settings import MattermostSettings

#: The largest JSON answer read (a page of 200 posts with their props fits; a hostile server's does not).
MAX_ANSWER_BYTES = 16 * 1024 * 1024


class Api:
    """One bot's REST calls (``Authorization: Bearer``), for one client."""

    def __init__(self, settings: MattermostSettings) -> None:
        self.settings = settings
        self._session: aiohttp.ClientSession | None = None
        #: loop time until which the server said no call remains (``X-Ratelimit-Remaining: 0``).
        self.exhausted_until = 0.0
        #: The last ``X-Ratelimit-Limit``/``Remaining`` the server sent (None: it limits nothing).
        self.limit: int | None = None
        self.remaining: int | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.settings.api_timeout),
                headers={"Authorization": f"Bearer {self.settings.token}", "X-Requested-With": "XMLHttpRequest"})
        return self._session

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    async def call(self, method: str, path: str, what: str, *, json_body: Any = None, data: Any = None,
                   params: Mapping[str, str] | None = None) -> Any:
        """``method path`` (below ``/api/v4``); the JSON answer, or DeliveryError/RateLimited."""
        loop = asyncio.get_running_loop()
        wait = self.exhausted_until - loop.time()
        if wait > 0:
            raise RateLimited(wait, f"mattermost {what}: no calls remain until the limit resets", scope="bot")
        try:
            async with self.session.request(method, self.settings.api + path, json=json_body, data=data,
                                            params=params) as response:
                body = await _read_bounded(response, what)
                self._note_limits(response.headers, loop.time())
                if response.status >= 300:
                    raise refused(what, response.status, response.headers, body)
        except Exception as exc:
            raise failed(what, exc) from None
        if not body:
            return None
        try:
            return json.loads(body)
        except ValueError:
            return None

    def _note_limits(self, headers: Mapping[str, str], now: float) -> None:
        try:
            self.limit = int(headers["X-Ratelimit-Limit"])
            self.remaining = int(headers["X-Ratelimit-Remaining"])
            reset = float(headers.get("X-Ratelimit-Reset", "1"))
        except (KeyError, ValueError):
            return
        if self.remaining <= 0 and 0 < reset <= 3600 and self.limit > 0:
            self.exhausted_until = now + reset / self.limit


async def _read_bounded(response: aiohttp.ClientResponse, what: str) -> bytes:
    """The whole body, or DeliveryError past :data:`MAX_ANSWER_BYTES` (a server that never stops is not read on)."""
    if response.content_length is not None and response.content_length > MAX_ANSWER_BYTES:
        raise DeliveryError(f"mattermost {what}: an answer of {response.content_length} bytes (at most "
                            f"{MAX_ANSWER_BYTES} are read)", retryable=False)
    chunks, size = [], 0
    async for chunk in response.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise DeliveryError(f"mattermost {what}: an answer over {MAX_ANSWER_BYTES} bytes", retryable=False)
        chunks.append(chunk)
    return b"".join(chunks)
