"""slack_sdk's failures, translated into the two exceptions the core understands.

The plugin never sleeps or retries: it says what happened and the delivery
core decides. Slack says "rate limited" two ways, and both become
``RateLimited``: HTTP 429 ``ratelimited`` with ``Retry-After`` (a
``SlackApiError``), and HTTP 200 ``{"ok": false, "error": "rate_limited"}``
(no header: :data:`DEFAULT_RETRY_AFTER`). Messages pass through
:func:`~.redaction.scrub` and are not chained to the original exception.
"""

from __future__ import annotations

import asyncio
from hermes_gateway import DeliveryError, RateLimited

from .redaction import scrub

#: Seconds to wait after an ``ok: false, rate_limited`` answer, which carries no Retry-After.
DEFAULT_RETRY_AFTER = 1.0
RATE_LIMIT_ERRORS = frozenset({"ratelimited", "rate_limited"})
#: Slack's own trouble: the same call may work in a moment.
TRANSIENT_ERRORS = frozenset({"internal_error", "fatal_error", "service_unavailable", "request_timeout",
                              "team_added_to_org"})
AUTH_ERRORS = frozenset({"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive"})
#: The bot cannot write here at all: one log line, and the reply stops.
CHANNEL_ERRORS = frozenset({"not_in_channel", "channel_not_found", "is_archived", "restricted_action",
                            "cannot_reply_to_message"})
#: chat.startStream refused because native streaming is not available to this app or workspace:
#: ``native_streaming: auto`` remembers it and uses chat.postMessage + chat.update from then on.
NATIVE_UNAVAILABLE_ERRORS = frozenset({"missing_scope", "not_allowed_token_type", "feature_not_enabled",
                                       "not_allowed", "access_denied", "unknown_method", "method_deprecated",
                                       "no_permission", "team_access_not_granted", "not_supported",
                                       "invalid_arguments"})
#: Methods whose limit is the workspace's (every channel together), not one channel's.
WORKSPACE_METHODS = frozenset({"chat.update", "chat.startStream", "chat.appendStream", "chat.stopStream",
                               "files.getUploadURLExternal", "files.completeUploadExternal"})



def error_code(exc: BaseException) -> str:
    """Slack's ``error`` string of a failed call ("" when it is not a Slack answer)."""
    response = getattr(exc, "response", None)
    if response is None:
        return ""
    try:
        return str(response.get("error") or "")
    except Exception:
        return ""


def status_of(exc: BaseException) -> int | None:
    return getattr(getattr(exc, "response", None), "status_code", None)


def retry_after_of(exc: BaseException) -> float:
    """Retry-After in seconds, from the 429's header; the default for Slack's 200-shaped answer."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name in ("Retry-After", "retry-after"):
        value = headers.get(name) if hasattr(headers, "get") else None
        if isinstance(value, list):
            value = value[0] if value else None
        if value is not None:
            try:
                return max(float(value), 0.0)
            except ValueError:
                break
    return DEFAULT_RETRY_AFTER


def is_rate_limited(exc: BaseException) -> bool:
    return status_of(exc) == 429 or error_code(exc) in RATE_LIMIT_ERRORS


def rate_limited(seconds: float, message: str, method: str) -> RateLimited:
    """``RateLimited``, scope "bot" for a workspace-wide method (every channel waits), else "chat"."""
    return RateLimited(seconds, message, scope="bot" if method in WORKSPACE_METHODS else "chat")


def translate(exc: BaseException, method: str) -> DeliveryError:
    """The core's view of a failed Web API call ``method`` (e.g. "chat.update")."""
    from slack_sdk.errors import SlackApiError

    if isinstance(exc, DeliveryError):
        return exc
    if isinstance(exc, SlackApiError):
        code = error_code(exc) or "unknown_error"
        status = status_of(exc)
        if is_rate_limited(exc):
            seconds = retry_after_of(exc)
            return rate_limited(seconds, f"slack {method}: {code}, retry after {seconds:g}s", method)
        if status is not None and status >= 500 or code in TRANSIENT_ERRORS:
            return DeliveryError(f"slack {method}: {code} (HTTP {status})", retryable=True)
        if code in AUTH_ERRORS:
            return DeliveryError(f"slack {method}: {code}: the bot token was rejected "
                                 "(check platforms.slack.bot_token)", retryable=False)
        if code in CHANNEL_ERRORS:
            return DeliveryError(f"slack {method}: {code}: the bot cannot write in this channel "
                                 "(invite it, or check the channel id)", retryable=False)
        if code == "msg_too_long":
            return DeliveryError(f"slack {method}: msg_too_long (over Slack's limit for this method)",
                                 retryable=False)
        return DeliveryError(f"slack {method}: {code}", retryable=False)
    if isinstance(exc, asyncio.TimeoutError):
        return DeliveryError(f"slack {method}: timed out", retryable=True, maybe_delivered=True)
    try:
        import aiohttp
    except ImportError:  # pragma: no cover - aiohttp comes with the gateway
        aiohttp = None  # type: ignore[assignment]
    if aiohttp is not None and isinstance(exc, aiohttp.ClientConnectorError):
        return DeliveryError(f"slack {method}: cannot connect: {scrub(str(exc))}", retryable=True)
    if aiohttp is not None and isinstance(exc, aiohttp.ClientError):
        # the request may have reached Slack before the connection broke
        return DeliveryError(f"slack {method}: {scrub(f'{type(exc).__name__}: {exc}')}", retryable=True,
                             maybe_delivered=True)
    return DeliveryError(f"slack {method}: {scrub(f'{type(exc).__name__}: {exc}')}", retryable=False)
