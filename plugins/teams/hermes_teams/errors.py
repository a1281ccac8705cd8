"""The Bot Connector's failures, translated into the two exceptions the core understands.

The plugin never sleeps or retries: it says what happened and the delivery
core decides (docs/plugins.md, section 5). Teams throttles per bot per
conversation with HTTP 429 and ``Retry-After`` (msteams-platform
``bots/how-to/rate-limit.md``; without the header: exponential backoff, so
:data:`DEFAULT_RETRY_AFTER`); it also names 412, 502, 503 and 504 as worth
another try. Streaming refusals are 403 ``ContentStreamNotAllowed`` with a
message that says why (``bots/streaming-ux.md``, "Error codes"): they become
:class:`StreamRefused`, which the outbound code reads. No message here holds
a URL's token or the bearer token (the token is registered with the core's
scrubber when fetched, and :func:`~hermes_gateway.scrub_secrets` runs on
every text).
"""

from __future__ import annotations

import asyncio

from hermes_gateway import DeliveryError, RateLimited, scrub_secrets

DEFAULT_RETRY_AFTER = 1.0
_RETRYABLE = frozenset({408, 412, 500, 502, 503, 504})


class StreamRefused(DeliveryError):
    """403 on a streaming activity; ``reason`` is Teams' message (lowercased) for the caller to read."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"teams refused the stream: {scrub_secrets(reason)[:200]}", retryable=False)
        self.reason = reason.lower()

    @property
    def timed_out(self) -> bool:
        return "exceeded streaming time" in self.reason

    @property
    def completed(self) -> bool:
        return "completed streamed message" in self.reason

    @property
    def cancelled(self) -> bool:
        return "cancel" in self.reason

    @property
    def not_allowed(self) -> bool:
        return not (self.timed_out or self.completed or self.cancelled)


def retry_after(value: str | None) -> float:
    if value is None:
        return DEFAULT_RETRY_AFTER
    try:
        seconds = float(value)
    except ValueError:
        return DEFAULT_RETRY_AFTER
    return seconds if 0 <= seconds < 3600 else DEFAULT_RETRY_AFTER


def translate(exc: BaseException, what: str, *, streaming: bool = False) -> DeliveryError:
    """The core's view of a failed connector call (``what``: e.g. "send", "update")."""
    import httpx

    if isinstance(exc, DeliveryError):
        return exc
    if isinstance(exc, httpx.HTTPStatusError):
        response = exc.response
        status = response.status_code
        code, message = _error_of(response)
        if status == 429:
            seconds = retry_after(response.headers.get("Retry-After"))
            return RateLimited(seconds, f"teams {what}: throttled, retry after {seconds:g}s")
        if status == 403 and streaming:
            return StreamRefused(message or code or "forbidden")
        if status == 401:
            return DeliveryError(f"teams {what}: the connector refused the bot's token (HTTP 401)", retryable=True)
        if status == 413:
            return DeliveryError(f"teams {what}: the message is too large for Teams (MessageSizeTooBig)",
                                 retryable=False)
        if status in _RETRYABLE:
            return DeliveryError(f"teams {what}: HTTP {status}", retryable=True)
        detail = f" {code}" if code else ""
        return DeliveryError(f"teams {what}: HTTP {status}{detail}", retryable=False)
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return DeliveryError(f"teams {what}: cannot connect to the Bot Connector", retryable=True)
    if isinstance(exc, httpx.TimeoutException | asyncio.TimeoutError):
        return DeliveryError(f"teams {what}: timed out", retryable=True, maybe_delivered=True)
    if isinstance(exc, httpx.TransportError):
        return DeliveryError(f"teams {what}: {type(exc).__name__}", retryable=True, maybe_delivered=True)
    return DeliveryError(f"teams {what}: {scrub_secrets(f'{type(exc).__name__}: {exc}')[:300]}", retryable=False)


def _error_of(response: object) -> tuple[str, str]:
    """``{"error": {"code", "message"}}``, the Bot Connector's error body; empty strings when it is not one."""
    try:
        body = response.json()  # type: ignore[attr-defined]
    except Exception:
        return "", ""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", ""
    return str(error.get("code") or "")[:100], str(error.get("message") or "")[:500]
