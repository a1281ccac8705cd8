"""Mattermost's answers, translated into the two exceptions the core understands.

The plugin never sleeps or retries: it says what happened and the delivery
core decides. Mattermost's rate limiter (``RateLimitSettings``, GCRA from
the ``throttled`` library, keyed by the token or the remote address) limits
the whole bot, never one channel, so a 429 is ``RateLimited(scope="bot")``;
its wait is ``Retry-After`` (whole seconds), else ``X-Ratelimit-Reset``
(seconds until the limit resets: ``app/ratelimit.go`` sends a delta, not
an epoch). Errors are JSON ``{id, message, status_code, ...}``; the ``id``
travels on the exception as ``error_id`` so a caller can tell "message too
long" from "not allowed". Messages are scrubbed and never carry the token.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any, Mapping

from hermes_gateway import DeliveryError, RateLimited, scrub_secrets

#: Seconds to wait after a 429 that names no wait at all (never seen from Mattermost; a proxy's).
DEFAULT_RETRY_AFTER = 1.0
#: ``model.post.is_valid.message_length.app_error``: the post is longer than the server's MaxPostSize.
TOO_LONG = "model.post.is_valid.message_length.app_error"


class MattermostError(DeliveryError):
    """A refused REST call: ``status`` and Mattermost's error ``error_id`` ("" when the body said none)."""

    def __init__(self, message: str, *, status: int, error_id: str = "", retryable: bool = False) -> None:
        super().__init__(message, retryable=retryable)
        self.status = status
        self.error_id = error_id


def wait_of(headers: Mapping[str, str]) -> float:
    """The seconds a 429 asks for: ``Retry-After``, else ``X-Ratelimit-Reset``, else the default."""
    for name in ("Retry-After", "X-Ratelimit-Reset"):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value)
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return min(seconds, 3600.0)
    return DEFAULT_RETRY_AFTER


def refused(what: str, status: int, headers: Mapping[str, str], body: bytes) -> DeliveryError:
    """The core's view of an HTTP answer that is not a success."""
    if status == 429:
        seconds = wait_of(headers)
        return RateLimited(seconds, f"mattermost {what}: rate limited, retry after {seconds:g}s", scope="bot")
    error_id, message = _error_of(body)
    detail = f"{error_id or 'HTTP ' + str(status)}" + (f" ({message})" if message else "")
    text = scrub_secrets(f"mattermost {what}: {detail}")[:300]
    if status == 401:
        return MattermostError(f"{text}: the token was refused (check platforms.mattermost.token)", status=status,
                               error_id=error_id)
    if status >= 500:
        return MattermostError(text, status=status, error_id=error_id, retryable=True)
    return MattermostError(text, status=status, error_id=error_id)


def failed(what: str, exc: BaseException) -> DeliveryError:
    """A call that got no answer: a timeout may have landed; a refused connection did not."""
    import aiohttp

    if isinstance(exc, DeliveryError):
        return exc
    if isinstance(exc, asyncio.TimeoutError):
        return DeliveryError(f"mattermost {what}: timed out", retryable=True, maybe_delivered=True)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return DeliveryError(f"mattermost {what}: cannot connect ({scrub_secrets(str(exc))[:200]})", retryable=True)
    if isinstance(exc, aiohttp.ClientError):
        # the request may have reached the server before the connection broke
        return DeliveryError(f"mattermost {what}: {scrub_secrets(f'{type(exc).__name__}: {exc}')[:200]}",
                             retryable=True, maybe_delivered=True)
    return DeliveryError(f"mattermost {what}: {scrub_secrets(f'{type(exc).__name__}: {exc}')[:200]}",
                         retryable=False)


def _error_of(body: bytes) -> tuple[str, str]:
    try:
        data: Any = json.loads(body[:65536])
    except ValueError:
        return "", body[:120].decode("utf-8", "replace").strip()
    if not isinstance(data, dict):
        return "", ""
    return str(data.get("id") or "")[:120], str(data.get("message") or "")[:200]
