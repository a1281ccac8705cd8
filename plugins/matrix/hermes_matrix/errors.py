"""mautrix's failures, translated into the two exceptions the core understands.

The plugin never sleeps or retries: it says what happened and the delivery
core decides. ``M_LIMIT_EXCEEDED`` (429) is ``RateLimited`` with the
homeserver's ``retry_after_ms`` (:mod:`.api` keeps it). Synapse's limit
(``rc_message``) is per sender across every room, so the wait is the bot's
(``scope="bot"``). A timeout after the request went out may have landed
(``maybe_delivered``); a 5xx or a refused connection is worth another try; a
refused token, a room the bot is not in, an event too large are not.
"""

from __future__ import annotations

import asyncio

import aiohttp
from hermes_gateway import DeliveryError, RateLimited, scrub_secrets


def translate(exc: BaseException, what: str) -> DeliveryError:
    """The core's view of a failed call (``what``: "send", "edit", "react", "upload" ...)."""
    from mautrix.errors import MatrixConnectionError, MatrixRequestError

    from .api import RateLimitedError  # mautrix is imported when the platform is used, not when it loads

    if isinstance(exc, DeliveryError):
        return exc
    if isinstance(exc, MatrixConnectionError) and exc.__cause__ is not None:
        exc = exc.__cause__  # mautrix wraps aiohttp's errors: what happened is the cause
    if isinstance(exc, RateLimitedError):
        return RateLimited(exc.retry_after, f"matrix {what}: M_LIMIT_EXCEEDED, retry after {exc.retry_after:g}s",
                           scope="bot")
    if isinstance(exc, MatrixRequestError):
        status = getattr(exc, "http_status", 0) or 0
        code = getattr(exc, "errcode", None) or f"HTTP {status}"
        message = scrub_secrets(str(getattr(exc, "message", None) or ""))[:200]
        text = f"matrix {what}: {code}" + (f" ({message})" if message else "")
        if code == "M_UNKNOWN_TOKEN":
            return DeliveryError(text + ": the access token was refused (check platforms.matrix)", retryable=False)
        if status >= 500:
            return DeliveryError(text, retryable=True)
        return DeliveryError(text, retryable=False)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return DeliveryError(f"matrix {what}: timed out", retryable=True, maybe_delivered=True)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return DeliveryError(f"matrix {what}: cannot connect to the homeserver", retryable=True)
    if isinstance(exc, (aiohttp.ClientError, MatrixConnectionError)):
        # the request may have reached the homeserver before the connection broke
        return DeliveryError(f"matrix {what}: {scrub_secrets(type(exc).__name__ + ': ' + str(exc))[:200]}",
                             retryable=True, maybe_delivered=True)
    return DeliveryError(f"matrix {what}: {scrub_secrets(type(exc).__name__ + ': ' + str(exc))[:200]}",
                         retryable=False)
