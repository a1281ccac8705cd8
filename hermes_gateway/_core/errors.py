"""The root of every exception the gateway defines, and those that cross the plugin boundary.

Every exception class of the gateway derives from :class:`HermesError`, so
``except HermesError`` catches whatever the gateway raises on purpose and
nothing else. Those a plugin meets live here: plugins never sleep, retry or
throttle: they translate their SDK's failures into :class:`DeliveryError` /
:class:`RateLimited` and let the delivery core decide what happens next; a
configuration mistake is a :class:`ConfigError`; something enabled that could
not start is a :class:`StartError`. Errors private to one part of the core
(the agent's, the store's, the API server's) live beside that part, under
the same root.
"""

from __future__ import annotations

from typing import Literal

#: Who a 429 stops: one chat (the default) or every chat of the bot.
RateScope = Literal["chat", "bot"]


class HermesError(Exception):
    """The base of every exception hermes-gateway defines (plugins may derive theirs from it too)."""


class DeliveryError(HermesError):
    """A platform call failed for a reason other than rate limiting.

    ``retryable`` tells the core whether the same call may succeed later
    (a timeout, a 5xx) or never will (a deleted chat, a bad token).
    ``maybe_delivered`` marks ambiguous failures, such as a timeout after the
    request was sent: the edit may have landed, so the core must reconcile
    instead of blindly re-sending a new message.
    """

    def __init__(self, message: str = "", *, retryable: bool = True, maybe_delivered: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.maybe_delivered = maybe_delivered


class RateLimited(DeliveryError):
    """The platform said "slow down" (HTTP 429, a flood error).

    ``retry_after`` is in seconds. ``scope`` says what the limit covers:
    ``"chat"`` (the default) stops calls into that one chat; ``"bot"``
    stops calls into every chat of the bot (Discord's global limit,
    WhatsApp's per-number throughput). The core makes no call the limit
    covers until the time has passed, and coalesces updates meanwhile.
    """

    def __init__(self, retry_after: float, message: str = "", *, scope: RateScope = "chat") -> None:
        if scope not in ("chat", "bot"):
            raise ValueError(f"RateLimited scope must be 'chat' or 'bot', not {scope!r}")
        super().__init__(message or f"rate limited ({scope}), retry after {retry_after:g}s", retryable=True)
        self.retry_after = float(retry_after)
        self.scope: RateScope = scope


class ConfigError(HermesError):
    """A configuration problem, always rendered as one line: file, key, expectation."""

    def __init__(self, source: str, key: str, expected: str) -> None:
        self.source = source
        self.key = key
        self.expected = expected
        super().__init__(f"{source}: {key}: {expected}")


class StartError(HermesError):
    """Something enabled in the config could not start; one line, shown by ``hermes-gateway run``."""
