"""python-telegram-bot's exceptions, translated into the two the core understands.

The plugin never sleeps or retries: it says what happened and the delivery
core decides. Every message passes through :func:`~.redaction.scrub`, and
the original exception is not chained (``from None``), because PTB's own
texts can quote the token.
"""

from __future__ import annotations

import datetime as dt
import warnings

from hermes_gateway import DeliveryError, RateLimited

from .redaction import scrub


def retry_after_seconds(exc: BaseException) -> float:
    """``RetryAfter.retry_after`` in seconds: an int in old PTB, a timedelta in v22 (opt-in), maybe a float."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # v22 warns that the int form is deprecated
        value = getattr(exc, "retry_after", 0)
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value or 0)


def is_not_modified(exc: BaseException) -> bool:
    return "message is not modified" in str(exc).lower()


def is_too_long(exc: BaseException) -> bool:
    """The server counted more than its limit (a PTB error or its translation)."""
    return "message is too long" in str(exc).lower()


def message_vanished(exc: BaseException) -> bool:
    """The message to edit is not there any more: deleted, or left behind in a group that moved.

    (Not "message can't be edited", e.g. too old: that message is still on screen, and only the
    core's fallback, which keeps or marks what it shows, leaves no cursor in it.)
    """
    from telegram import error as tg

    return isinstance(exc, tg.ChatMigrated) or (
        isinstance(exc, tg.BadRequest) and "message to edit not found" in str(exc).lower())


def is_gone(exc: BaseException) -> bool:
    """The bot cannot reach this chat any more: blocked by the user, removed from the group, chat not found.

    Nothing sent there will land until a person writes again, so the reply stops (no retry).
    """
    from telegram import error as tg

    if isinstance(exc, tg.Forbidden):
        return True
    return isinstance(exc, tg.BadRequest) and "chat not found" in str(exc).lower()


def translate(exc: BaseException, what: str) -> DeliveryError:
    """The core's view of a failed Bot API call ``what`` (e.g. "sendMessage")."""
    from telegram import error as tg  # lazily: the gateway starts without python-telegram-bot

    detail = scrub(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, tg.RetryAfter):
        seconds = retry_after_seconds(exc)
        return RateLimited(seconds, f"telegram {what}: flood control, retry after {seconds:g}s")
    if isinstance(exc, tg.TimedOut):
        # A pool or connect timeout never sent the request; any other timeout may have landed.
        cause = exc.__cause__
        sent = not (cause is not None and type(cause).__name__ in ("ConnectTimeout", "PoolTimeout")) \
            and "pool timeout" not in str(exc).lower()
        return DeliveryError(f"telegram {what}: {detail}", retryable=True, maybe_delivered=sent)
    if isinstance(exc, tg.BadRequest):  # a subclass of NetworkError in PTB: check it first
        return DeliveryError(f"telegram {what}: {detail}", retryable=False)
    if isinstance(exc, tg.NetworkError):  # connection reset, 5xx, 502 from a proxy
        return DeliveryError(f"telegram {what}: {detail}", retryable=True)
    if isinstance(exc, tg.ChatMigrated):
        return DeliveryError(f"telegram {what}: the group became a supergroup with id {exc.new_chat_id}",
                             retryable=False)
    if isinstance(exc, tg.InvalidToken):
        return DeliveryError(f"telegram {what}: the bot token was rejected (check platforms.telegram.token)",
                             retryable=False)
    # Forbidden (blocked by the user, kicked from the group), Conflict, anything else
    return DeliveryError(f"telegram {what}: {detail}", retryable=False)
