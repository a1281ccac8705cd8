"""discord.py's failures, translated into the two exceptions the core understands.

The plugin never sleeps or retries (see :mod:`.ratelimit` for how discord.py
is kept from doing so): it says what happened and the delivery core
decides. Texts pass through :func:`~.redaction.scrub` and are not chained.
"""

from __future__ import annotations

import asyncio
import logging

from hermes_gateway import DeliveryError, RateLimited

from .ratelimit import Refused
from .redaction import scrub

log = logging.getLogger(__name__)

UNKNOWN_MESSAGE = 10008
UNKNOWN_CHANNEL = 10003
MISSING_ACCESS = 50001
MISSING_PERMISSIONS = 50013
INVALID_FORM_BODY = 50035
#: "This message has been edited too many times" / edits of messages older than an hour have their own limit.
EDIT_LIMIT = 30046
#: Statuses after which a request may have been carried out even though no answer came back.
MAYBE_DONE_STATUSES = frozenset({502, 504, 524})

def rate_limited(retry_after: float, message: str, scope: str = "chat") -> RateLimited:
    """``RateLimited`` with its scope: "bot" for Discord's global limit, which stops every channel."""
    return RateLimited(retry_after, message, scope=scope)  # type: ignore[arg-type]


class PermanentFailure(DeliveryError):
    """A failure no retry can fix in this channel (missing permissions, unknown channel)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message, retryable=False)
        self.code = code


def translate(exc: BaseException, what: str) -> DeliveryError:
    """The core's view of a failed REST call ``what`` (e.g. "create message")."""
    import aiohttp
    import discord

    detail = scrub(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, Refused):
        if exc.status == 429:
            scope = "bot" if exc.is_global else "chat"
            return rate_limited(exc.retry_after, f"discord {what}: 429 ({scope} limit), retry after "
                                                 f"{exc.retry_after:g}s", scope)
        return DeliveryError(f"discord {what}: HTTP {exc.status} {scrub(exc.detail)}".rstrip(), retryable=True,
                             maybe_delivered=exc.status in MAYBE_DONE_STATUSES)
    if isinstance(exc, discord.RateLimited):  # beyond max_ratelimit_timeout (only if a 429 slipped past the watch)
        return rate_limited(exc.retry_after, f"discord {what}: rate limited, retry after {exc.retry_after:g}s")
    if isinstance(exc, discord.HTTPException):
        code = getattr(exc, "code", 0)
        text = scrub(getattr(exc, "text", "") or str(exc))
        if code == UNKNOWN_MESSAGE:
            return DeliveryError(f"discord {what}: the message is gone (10008 Unknown Message)", retryable=False)
        if code in (MISSING_PERMISSIONS, MISSING_ACCESS, UNKNOWN_CHANNEL):
            return PermanentFailure(f"discord {what}: {code} {text} (the bot cannot post in this channel)", code)
        if code == EDIT_LIMIT:
            return DeliveryError(f"discord {what}: this message cannot be edited any more (30046 {text})",
                                 retryable=False)
        if code == INVALID_FORM_BODY:
            return DeliveryError(f"discord {what}: Discord refused the message (50035 Invalid Form Body: {text}); "
                                 "content is limited to 2000 characters", retryable=False)
        if exc.status == 401:
            return DeliveryError(f"discord {what}: the bot token was rejected (check platforms.discord.token)",
                                 retryable=False)
        if exc.status >= 500:
            return DeliveryError(f"discord {what}: {detail}", retryable=True)
        return DeliveryError(f"discord {what}: {exc.status} {code} {text}", retryable=False)
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return DeliveryError(f"discord {what}: no answer in time", retryable=True, maybe_delivered=True)
    if isinstance(exc, aiohttp.ClientConnectorError):  # never connected: the request was not sent
        return DeliveryError(f"discord {what}: cannot connect ({detail})", retryable=True)
    if isinstance(exc, (aiohttp.ClientError, OSError)):  # reset or disconnected mid-request: it may have landed
        return DeliveryError(f"discord {what}: {detail}", retryable=True, maybe_delivered=True)
    if isinstance(exc, discord.DiscordException):
        return DeliveryError(f"discord {what}: {detail}", retryable=False)
    return DeliveryError(f"discord {what}: {detail}", retryable=False)
