"""Keep the bot token (and the webhook secret) out of logs and error messages.

The Bot API puts the token in every URL (``/bot<token>/sendMessage``), so
httpx logs it at INFO on every request, python-telegram-bot logs it at
DEBUG when a ``Bot`` is built, and its ``InvalidToken`` error quotes it
(capitalised, so in lower case). Anyone who can read the gateway's log
could then drive the bot. The core (:mod:`hermes_gateway._core.secrets`) rewrites
every log record of the process without it, whatever the case, and
:func:`scrub` does the same for text we put into exceptions.
"""

from __future__ import annotations

from hermes_gateway._core.secrets import protect as _protect
from hermes_gateway._core.secrets import scrub

__all__ = ["MASK", "protect", "scrub"]

MASK = "<telegram-token>"


def protect(secret: str) -> None:
    """Register a secret; for a bot token, also its secret half (quoted alone in some errors)."""
    _, _, secret_half = secret.partition(":")
    _protect(secret, secret_half or None, mask=MASK)
