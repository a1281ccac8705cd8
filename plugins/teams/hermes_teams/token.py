"""The bot's outbound token: OAuth 2.0 client credentials from the token service, cached until it expires.

``POST {token_url}`` with ``grant_type=client_credentials``, the app id and
secret and ``scope=https://api.botframework.com/.default`` answers
``{token_type, expires_in, access_token}`` (bot-docs, connector
authentication). The Teams SDK mints it with MSAL's synchronous client (a
blocking call on the event loop, and an authority that cannot point at an
emulator), so it is asked for here with aiohttp. The token is registered
with the core's scrubber the moment it arrives, so it never reaches a log
line, and is fetched again a few minutes before it expires. Concurrent
callers share one request.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp

from hermes_gateway import DeliveryError, RateLimited, protect_secret

from .auth import SessionSource

#: Fetch a new token this long before the old one expires.
EARLY_SECONDS = 300.0


class BotToken:
    """The current bearer token for the Bot Connector API."""

    def __init__(self, token_url: str, app_id: str, app_password: str, scope: str, session: SessionSource) -> None:
        self._url = token_url
        self._form = {"grant_type": "client_credentials", "client_id": app_id, "client_secret": app_password,
                      "scope": scope}
        self._session = session
        self._token: str | None = None
        self._expires = 0.0
        self._lock = asyncio.Lock()

    def forget(self) -> None:
        """The connector refused the token (401): the next call fetches a fresh one."""
        self._token = None

    async def get(self) -> str:
        if self._token and time.monotonic() < self._expires:
            return self._token
        async with self._lock:
            if self._token and time.monotonic() < self._expires:
                return self._token
            return await self._fetch()

    async def _fetch(self) -> str:
        session = await self._session()
        try:
            async with session.post(self._url, data=self._form, timeout=aiohttp.ClientTimeout(total=30)) as response:
                if response.status == 429:
                    raise RateLimited(_seconds(response.headers.get("Retry-After")), "teams: the token service "
                                      "is throttling", scope="bot")
                body = await response.json(content_type=None) if response.status < 500 else None
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as exc:
            raise DeliveryError(f"teams: cannot reach the token service ({type(exc).__name__})",
                                retryable=True) from None
        if response.status >= 500:
            raise DeliveryError(f"teams: the token service answered HTTP {response.status}", retryable=True)
        token = body.get("access_token") if isinstance(body, dict) else None
        if response.status != 200 or not isinstance(token, str) or not token:
            error = body.get("error") if isinstance(body, dict) else None
            raise DeliveryError(f"teams: the token service refused the bot's credentials (HTTP {response.status}"
                                f"{', ' + str(error) if error else ''}): check platforms.teams.app_id and "
                                "app_password", retryable=False)
        protect_secret(token)
        assert isinstance(body, dict)  # (a token came in it)
        try:
            lifetime = float(body.get("expires_in", 3600))
        except (TypeError, ValueError):
            lifetime = 3600.0
        self._token = token
        self._expires = time.monotonic() + max(lifetime - EARLY_SECONDS, lifetime / 2, 1.0)
        return token


def _seconds(value: str | None) -> float:
    try:
        return max(float(value or 1), 0.0)
    except ValueError:
        return 1.0
